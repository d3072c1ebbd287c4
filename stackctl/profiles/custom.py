"""A model profile written into stack.yaml (`models:`), e.g. derived by `stackctl init --model
hf:ORG/NAME` from the model's config.json: the same fields as a built-in profile."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from stackctl.profiles.model_profiles import ModelProfile


class CustomModel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    # Hugging Face repo id (ORG/NAME); None with vllm.model_path (a local directory).
    hf_id: str | None = None
    served_name: str
    architecture: str | None = None
    quantization: str = "bf16"
    weights_gb: float = Field(0.0, ge=0)
    max_model_len: int = Field(ge=256)
    max_num_seqs: int = Field(ge=1)
    tool_call_parser: str | None = None
    reasoning_parser: str | None = None
    kv_cache_dtype: str | None = None
    hybrid: bool = False
    gated: bool = False
    extra_args: list[str] = Field(default_factory=list)

    def profile(self, name: str) -> ModelProfile:
        data = self.model_dump()
        data["extra_args"] = tuple(data["extra_args"])
        return ModelProfile(name=name, gpu_only=True, **data)

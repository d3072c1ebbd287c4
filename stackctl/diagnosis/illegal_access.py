"""A CUDA kernel that read or wrote outside its memory ("an illegal memory access was encountered",
cudaErrorIllegalAddress): read by the cuda-illegal-memory-access signature and by the fallback alike.

In vLLM most often a bug of one kernel or of CUDA-graph replay for this model, this release and this GPU
(vllm#45670 and #30044 under CUDA graphs, #5376 in an attention backend, MiniMax-M2's recipe:
cudagraph_mode PIECEWISE). CUDA reports it asynchronously, so the traceback's frame is not where it
happened; CUDA_LAUNCH_BLOCKING=1 makes it name the kernel.
"""

from __future__ import annotations

import re

ILLEGAL_ADDRESS = re.compile(r"an illegal memory access was encountered|cudaErrorIllegalAddress"
                             r"|CUDA_ERROR_ILLEGAL_ADDRESS")
def illegal_access_fix(under_graphs: bool) -> str:
    first = ("the log shows CUDA graphs at work when it failed, so start there: " if under_graphs else
             "find out whether CUDA graphs are at fault first: ")
    return (f"{first}add `--compilation-config '{{\"cudagraph_mode\": \"PIECEWISE\"}}'` to vllm.extra_args in stack.yaml "
            "(graphs only around attention; the fix model recipes give for this error), or --enforce-eager (no CUDA "
            "graphs nor torch.compile: slower decoding, the surest test); if it still fails, try another attention "
            "backend (--attention-backend) or turn off the feature the request used (speculative decoding, a "
            "quantized KV cache, logprobs under load); a newer images.vllm often carries the kernel's fix. It is "
            "usually a bug of a kernel or of CUDA-graph replay for this model, vLLM release and GPU, not of the "
            "host: report it to vLLM with the log of a run under CUDA_LAUNCH_BLOCKING=1 (vllm.environment; slow, "
            "but the traceback then names the kernel that failed) and the exact model, flags and GPU")

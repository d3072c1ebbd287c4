"""The host's kernel modules: one Secure Boot refuses because no key the firmware trusts signed it,
and the NVIDIA driver's modules missing for the kernel that runs (a kernel update the driver's
modules did not follow)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

# Ubuntu ships the NVIDIA driver's modules prebuilt per kernel (linux-modules-nvidia-<driver>-<kernel>,
# signed by Canonical) or builds them with DKMS; after a kernel update either can be missing for the new
# kernel (the meta package not following it, the DKMS build failing), and the driver does not load.
NEW_KERNEL_WITHOUT_MODULES = (
    "the running kernel has no NVIDIA modules (Ubuntu's prebuilt "
    "`linux-modules-nvidia-<driver>-$(uname -r)` package not installed for it, or a DKMS build that failed: "
    "`dkms status`): install them for `uname -r` (e.g. `sudo apt install linux-modules-nvidia-580-open-$(uname -r)`, "
    "or `sudo dkms autoinstall`) or boot the previous kernel (GRUB's Advanced options), and hold the kernel "
    "packages (`sudo apt-mark hold` them) until the driver's modules follow")

# modprobe, insmod and systemd-modules-load name the module they could not insert.
_MODULE = re.compile(r"(?:could not insert (?:module )?|Failed to insert module )'?(?:\S*/)?(?P<module>[\w.-]+?)(?:\.ko)?'?:")


def _kernel_module_unsigned(evidence: Evidence) -> Diagnosis:
    """EKEYREJECTED ("Key was rejected by service") and ENOKEY ("Required key not available") from the
    kernel's module signature check, and the lockdown that Secure Boot turns on: the module is not
    signed by a key the firmware or the machine owner's list (MOK) trusts. A module DKMS built is signed
    with the machine's own MOK, which has to be enrolled once, at the firmware's MOK manager."""
    module = evidence.read(_MODULE).get("module") or next(iter(evidence.all_found(_MODULE, "module")), None)
    named = f"the {module} kernel module" if module else "a kernel module"
    load = f"`sudo modprobe {module}`" if module else "load the module again"
    nvidia = module is None or module.startswith("nvidia")
    driver = ("; for the NVIDIA driver, Ubuntu's prebuilt `linux-modules-nvidia-<driver>-$(uname -r)` modules are "
              "already signed by a key Secure Boot trusts") if nvidia else ""
    then = ", `nvidia-smi` must list the GPU, then `stackctl up`" if nvidia else ""
    return found(evidence, Cause.kernel_module_unsigned,
                 f"Secure Boot refuses {named}: no key the firmware trusts signed it (a module DKMS built is signed "
                 "with the machine's own key, the MOK, which is not enrolled)",
                 Fix("enroll the key that signed it: `sudo mokutil --import /var/lib/shim-signed/mok/MOK.der` "
                     "(Ubuntu's DKMS key; `sudo update-secureboot-policy --enroll-key` does the same), choose a "
                     "one-time password, reboot and pick \"Enroll MOK\" in the blue MOK manager screen; or sign the "
                     f"module with a key already enrolled (kmodsign or the kernel's sign-file){driver}; or turn "
                     f"Secure Boot off in the firmware settings. Then {load}{then}"),
                 **({"module": module} if module else {}))


_NOT_FOUND = re.compile(r"Module (?P<module>nvidia[\w-]*) not found in directory /lib/modules/(?P<kernel>\S+)")


def _nvidia_module_missing_for_kernel(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_NOT_FOUND)
    return found(evidence, Cause.gpu_driver_not_loaded,
                 f"the running kernel {values['kernel']} has no {values['module']} module: the NVIDIA driver cannot "
                 "load, so nothing on the host can use the GPU",
                 Fix(f"{NEW_KERNEL_WITHOUT_MODULES[0].upper()}{NEW_KERNEL_WITHOUT_MODULES[1:]}; with no driver installed at all, install it (e.g. `sudo apt "
                     "install nvidia-driver-580-open`) and reboot; `nvidia-smi` on the host must list the GPU, then "
                     "`stackctl up`"), **values)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.kernel_module_unsigned,
              r"(?:could not insert|Failed to insert module) .*: (?:Key was rejected by service|Required key not "
              r"available)|Loading of (?:unsigned )?module with unavailable key is rejected"
              r"|Lockdown: \S+: unsigned module loading is restricted", _kernel_module_unsigned),
    signature(Cause.gpu_driver_not_loaded, _NOT_FOUND.pattern, _nvidia_module_missing_for_kernel),
)

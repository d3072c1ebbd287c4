#!/usr/bin/env bash
# What a GPU host is, as stackctl's doctor and the GPU check see it: written to one archive
# (DEST/host-facts.tar.gz) so the files come back from a machine that returns few files.
#   tools/gpu_check/host_facts.sh DEST
set -u
dest=${1:?usage: host_facts.sh DEST}
work=$(mktemp -d)
mkdir -p "$work/proc/driver/nvidia/gpus"
# The doctor's host-sample layout (tests/data/doctor/hosts/README.md).
nvidia-smi --query-gpu=name,pci.bus_id,driver_version,memory.total,compute_cap --format=csv,noheader,nounits \
    > "$work/nvidia-smi.csv" 2>&1
echo $? > "$work/nvidia-smi.exit"
cp /proc/driver/nvidia/version "$work/proc/driver/nvidia/version" 2>/dev/null
for gpu in /proc/driver/nvidia/gpus/*; do
    [ -d "$gpu" ] && mkdir -p "$work/proc/driver/nvidia/gpus/$(basename "$gpu")" \
        && cp "$gpu/information" "$work/proc/driver/nvidia/gpus/$(basename "$gpu")/" 2>/dev/null
done
cp /proc/meminfo "$work/proc/meminfo"
# What the GPU check's bundle leaves out (the host's own packages) and what it runs on.
python3 -m pip list --format=freeze > "$work/pip-freeze.txt" 2>/dev/null
{
    echo "python3: $(command -v python3) $(python3 -V 2>&1)"
    python3 -c 'import sys, sysconfig; print("base:", sys._base_executable); print("purelib:", sysconfig.get_paths()["purelib"])'
    python3 -c 'import torch; print("torch:", torch.__version__, "cuda:", torch.version.cuda)' 2>&1 | tail -1
    cat /etc/os-release 2>/dev/null | grep -E '^(PRETTY_NAME|ID|VERSION_ID)='
    uname -a; nproc; free -g | head -2; df -h /tmp / | tail -2
    for tool in dpkg ar nginx prometheus node npm curl; do echo "$tool: $(command -v $tool || echo missing)"; done
    ls /lib/x86_64-linux-gnu/ 2>/dev/null | grep -E '^lib(ssl|crypto|pcre2-8|z|crypt)\.so' | tr '\n' ' '; echo
} > "$work/machine.txt" 2>&1
nvidia-smi -q > "$work/nvidia-smi-q.txt" 2>&1
nvidia-smi > "$work/nvidia-smi.txt" 2>&1
mkdir -p "$dest"
tar -czf "$dest/host-facts.tar.gz" -C "$work" .
rm -rf "$work"

#!/usr/bin/env python3
"""The compiled kernels a disk kernel cache holds, written out to be read.

    python3 bench/kcache-extract.py CACHE_DIR OUT_DIR

A context with ps_context_options.kernel_cache_dir (packscan_bench
--kernel-cache DIR) keeps each kernel it compiles at run time in a file of
CACHE_DIR (core/kcache_disk.c: a 40-byte header of magic, version, key size,
payload size and checksum, then the key, then the driver's binary). This
writes each payload to OUT_DIR as NAME.cubin (an ELF: CUDA's NVRTC output),
NAME.ptx (NVIDIA's OpenCL driver keeps PTX text) or NAME.bin (anything else,
e.g. PoCL's), and prints one line per file: its name, the payload's kind and
size, the build's kind, the kernel entry names found in it, and a specialized
kernel's shape (the PS_Q*_ #defines its key holds: mode, groups, lanes...). Then `cuobjdump -sass
NAME.cubin`, or `ptxas -arch=sm_90 -v NAME.ptx -o NAME.cubin` first, show
registers and instructions. Files that fail the header checks are named and
skipped; the exit status is 1 if any was.
"""
import os
import re
import struct
import sys

HEADER = 40
MAGIC = b"PSKCACHE"


def key_fields(key):
    """The key's fields (backend, source, build, options, shape, device...),
    each a NUL-terminated name, a little-endian 64-bit size and the bytes."""
    fields, at = {}, 0
    while at < len(key):
        end = key.find(b"\0", at)
        if end < 0 or end + 9 > len(key):
            break
        size = struct.unpack_from("<Q", key, end + 1)[0]
        fields[key[at:end].decode(errors="replace")] = key[end + 9:end + 9 + size]
        at = end + 9 + size
    return fields


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    if not os.path.isdir(src):
        print(f"kcache-extract.py: {src} is not a directory", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    bad = 0
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        data = open(path, "rb").read()
        if len(data) < HEADER or data[:8] != MAGIC:
            print(f"{name}: not a kernel cache file", file=sys.stderr)
            bad = 1
            continue
        key_size, payload_size = struct.unpack_from("<QQ", data, 16)
        if HEADER + key_size + payload_size != len(data):
            print(f"{name}: sizes do not match the file ({len(data)} bytes)", file=sys.stderr)
            bad = 1
            continue
        payload = data[HEADER + key_size:]
        if payload[:4] == b"\x7fELF":
            kind, ext = "cubin", "cubin"
            entries = sorted(set(m.decode() for m in re.findall(rb"\.text\.([A-Za-z_][A-Za-z0-9_]*)", payload)))
        elif b".version" in payload[:4096] and b".target" in payload[:4096]:
            kind, ext = "ptx", "ptx"
            entries = [m.decode() for m in re.findall(rb"\.entry\s+([A-Za-z_][A-Za-z0-9_$]*)", payload)]
        else:
            kind, ext = "binary", "bin"
            entries = []
        with open(os.path.join(out, f"{name}.{ext}"), "wb") as f:
            f.write(payload)
        fields = key_fields(data[HEADER:HEADER + key_size])
        shape = fields.get("shape", b"")
        # A specialized kernel's shape starts with its #defines: the mode, groups, lanes.
        spec = [f"{m[0].decode()}={m[1].decode()}" for m in re.findall(rb"#define (PS_QS?_[A-Z0-9_]+) (\S+)", shape)]
        shown = " ".join(entries[:8]) + (" ..." if len(entries) > 8 else "")
        print(f"{name} {kind} {payload_size} [{fields.get('build', b'').decode(errors='replace')}] "
              f"entries: {shown or '-'}; shape: {' '.join(spec) or 'generic'}")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))

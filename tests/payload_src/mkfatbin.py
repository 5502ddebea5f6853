#!/usr/bin/env python3
"""Writes a fatbin with NVIDIA's own fatbin writer (libnvfatbin, from the PyPI wheel
nvidia-nvfatbin-cu12 that scripts/fetch-cuda-tools.sh unpacks), for tests/tests/payload_real.rs.

usage: mkfatbin.py LIBNVFATBIN OUT [-o OPTION]... (cubin|ptx):ARCH:PATH...
ARCH is the number nvFatbinAddCubin/nvFatbinAddPTX take ("90"). Options go to nvFatbinCreate
("-64", "-compress-all", ...)."""
import ctypes
import sys


def main():
    lib = ctypes.CDLL(sys.argv[1])
    out = sys.argv[2]
    options, images = [], []
    args = iter(sys.argv[3:])
    for arg in args:
        if arg == "-o":
            options.append(next(args))
        else:
            images.append(arg.split(":", 2))
    lib.nvFatbinGetErrorString.restype = ctypes.c_char_p

    def check(result, what):
        if result != 0:
            sys.exit(f"mkfatbin: {what}: {lib.nvFatbinGetErrorString(result).decode()}")

    handle = ctypes.c_void_p()
    opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
    check(lib.nvFatbinCreate(ctypes.byref(handle), opts, ctypes.c_size_t(len(options))), "nvFatbinCreate")
    for kind, arch, path in images:
        data = open(path, "rb").read()
        name = path.rsplit("/", 1)[-1].encode()
        if kind == "cubin":
            check(lib.nvFatbinAddCubin(handle, data, ctypes.c_size_t(len(data)), arch.encode(), name), f"add {path}")
        elif kind == "ptx":
            # nvFatbinAddPTX wants a NUL-terminated string and counts the NUL in its size.
            text = data + b"\0"
            check(lib.nvFatbinAddPTX(handle, text, ctypes.c_size_t(len(text)), arch.encode(), name, b""), f"add {path}")
        else:
            sys.exit(f"mkfatbin: unknown image kind {kind}")
    size = ctypes.c_size_t()
    check(lib.nvFatbinSize(handle, ctypes.byref(size)), "nvFatbinSize")
    buf = ctypes.create_string_buffer(size.value)
    check(lib.nvFatbinGet(handle, buf), "nvFatbinGet")
    lib.nvFatbinDestroy(ctypes.byref(handle))
    with open(out, "wb") as f:
        f.write(buf.raw)


if __name__ == "__main__":
    main()

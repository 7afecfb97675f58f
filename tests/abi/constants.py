#!/usr/bin/env python3
"""ABI check (a): every constant and handle value in our mpi.h equals MPICH's.

The list of names is taken from our configured mpi.h at test time, so a constant added to the
header is checked without editing this test. One C program printing each value (and the sizes and
field offsets that make up the ABI: MPI_Status, MPI_Aint, MPI_Offset, MPI_Count, handle types) is
compiled against our header and against MPICH's; the two outputs must be identical.

Values that are not compile-time constants (addresses of exported objects such as MPI_UNWEIGHTED)
print as <runtime>; they are covered by the exports test instead.

usage: constants.py OUR_INCLUDE_DIR MPICH_INCLUDE_DIR CC WORKDIR
exit 0 = identical, 1 = differences (listed), 77 = MPICH's header is not installed.
"""
import os
import re
import subprocess
import sys

SKIP = 77

# Names that are ours alone or header plumbing; they have no MPICH counterpart to compare.
OURS_ONLY = {
    "MANIFOLD", "MANIFOLD_VERSION", "MANIFOLD_NUMVERSION", "MPI_INCLUDED", "MPI_PROTO_H_INCLUDED",
    "MPI_FILE_DEFINED", "HAVE_MPI_OFFSET",
    # The level of the standard each library implements (Manifold 4.1, Debian's MPICH 4.0, the
    # 5.0.2 wheel 5.0), not ABI: a binary never passes it to the library.
    "MPI_VERSION", "MPI_SUBVERSION",
}

# Constants of MPI versions after the reference header's (Debian's MPICH 4.0.2): when that header
# lacks them, our value must equal the one MPICH 4.1 and later define (checked against the mpi.h
# of the mpich 5.0.2 wheel from PyPI), which binaries built with those MPICHs (the mpi4py wheels)
# pass to us.
NEWER_MPICH = {"MPI_T_ERR_NOT_ACCESSIBLE": "79", "MPI_ERR_ERRHANDLER": "80",
               "MPI_BUFFER_AUTOMATIC": "-2", "MPI_COMM_TYPE_RESOURCE_GUIDED": "4"}

TYPES = ["MPI_Aint", "MPI_Offset", "MPI_Count", "MPI_Fint", "MPI_Comm", "MPI_Group",
         "MPI_Datatype", "MPI_Op", "MPI_Errhandler", "MPI_Request", "MPI_Message", "MPI_Info",
         "MPI_Win", "MPI_Session", "MPI_File", "MPI_Status", "MPI_F08_status"]
STATUS_FIELDS = ["count_lo", "count_hi_and_cancelled", "MPI_SOURCE", "MPI_TAG", "MPI_ERROR"]


def names_from(header_dir):
    names = []
    for h in ("mpi.h", "mpi_proto.h"):
        path = os.path.join(header_dir, h)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                # Object-like macros only: "#define NAME value", not "#define NAME(args)".
                m = re.match(r"\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)(\s|$)", line)
                if m and m.group(1) not in OURS_ONLY and m.group(1) not in names:
                    names.append(m.group(1))
    return names


def program(names, absent):
    out = ["#include <mpi.h>", "#include <stddef.h>", "#include <stdint.h>", "#include <stdio.h>",
           "",
           "static void show(const char *name, int is_const, int is_str, long long v, const char *s)",
           "{",
           "    if (is_str) printf(\"%s \\\"%s\\\"\\n\", name, s);",
           "    else if (is_const) printf(\"%s %lld\\n\", name, v);",
           "    else printf(\"%s <runtime>\\n\", name);",
           "}",
           "",
           "#define STR(x) _Generic((x), char *: (x), const char *: (x), default: \"\")",
           "#define ISSTR(x) _Generic((x), char *: 1, const char *: 1, default: 0)",
           "#define SHOW(x) show(#x, __builtin_constant_p((long long)(intptr_t)(x)), ISSTR(x), \\",
           "    __builtin_constant_p((long long)(intptr_t)(x)) ? (long long)(intptr_t)(x) : 0, STR(x))",
           "",
           "int main(void)",
           "{"]
    for t in TYPES:
        out.append(f'    printf("sizeof({t}) %zu\\n", sizeof({t}));')
    for fld in STATUS_FIELDS:
        out.append(f'    printf("offsetof(MPI_Status, {fld}) %zu\\n", offsetof(MPI_Status, {fld}));')
    for n in names:
        if n in absent:
            out.append(f'    printf("{n} <absent>\\n");')
        else:
            out.append(f"    SHOW({n});")
    out += ["    return 0;", "}", ""]
    return "\n".join(out)


def build_and_run(cc, incdir, names, workdir, tag):
    """Compiles against incdir; names the compiler reports undeclared print as <absent>."""
    src = os.path.join(workdir, f"abi_constants_{tag}.c")
    exe = os.path.join(workdir, f"abi_constants_{tag}")
    absent = set()
    for _ in range(3):
        with open(src, "w") as f:
            f.write(program(names, absent))
        cmd = cc.split() + ["-std=gnu11", "-O2", "-w", "-I", incdir, src, "-o", exe]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 0:
            break
        missing = set(re.findall(r"[‘'`]([A-Za-z_][A-Za-z0-9_]*)[’'] undeclared", r.stderr))
        missing |= set(re.findall(r"use of undeclared identifier '([A-Za-z_0-9]+)'", r.stderr))
        if not missing - absent:
            sys.stderr.write(f"compiling against {incdir} failed:\n{' '.join(cmd)}\n{r.stderr}")
            sys.exit(1)
        absent |= missing
    else:
        sys.stderr.write(f"compiling against {incdir} kept failing\n")
        sys.exit(1)
    r = subprocess.run([exe], capture_output=True, text=True, check=True)
    return r.stdout.splitlines()


def newer(ours_line, theirs_line):
    """MPICH's line, or the newer MPICH's value where the reference header lacks the name."""
    name, _, value = theirs_line.partition(" ")
    if value == "<absent>" and name in NEWER_MPICH:
        return f"{name} {NEWER_MPICH[name]}"
    return theirs_line


def main():
    ours_dir, mpich_dir, cc, workdir = sys.argv[1:5]
    if not os.path.exists(os.path.join(mpich_dir, "mpi.h")):
        print(f"SKIP: MPICH's header {mpich_dir}/mpi.h is not installed (apt-get install libmpich-dev)")
        return SKIP
    os.makedirs(workdir, exist_ok=True)
    names = names_from(ours_dir)
    ours = build_and_run(cc, ours_dir, names, workdir, "manifold")
    theirs = build_and_run(cc, mpich_dir, names, workdir, "mpich")
    theirs = [newer(a, b) for a, b in zip(ours, theirs)]
    bad = [(a, b) for a, b in zip(ours, theirs) if a != b]
    for a, b in bad:
        print(f"MISMATCH  manifold: {a:50s} mpich: {b}")
    print(f"{len(ours)} values compared, {len(bad)} differ")
    return 1 if bad or len(ours) != len(theirs) else 0


if __name__ == "__main__":
    sys.exit(main())

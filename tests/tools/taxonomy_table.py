#!/usr/bin/env python3
"""taxonomy_table.py - the table of docs/taxonomy.md: every distinct kernel
name of the shared corpus and conformance traces that the two built-in
classification profiles ("reference" and "default") put in different
categories (Python 3 standard library only; not run by make check).

Usage: taxonomy_table.py KERNDIFF SHARED [--both-other] [--all]

  KERNDIFF      the kerndiff binary (its `rules --classify` does the work)
  SHARED        the shared directory (../shared of the project root); every
                *.json / *.json.gz trace under SHARED/corpus and
                SHARED/conformance is read (expected outputs, which are not
                traces, are skipped)
  --both-other  print instead the names both profiles leave in `other`
  --all         print every name with both categories (TSV)

A name is collected from each event whose `cat` contains "kernel" or starts
with "gpu_" (kernel, gpu_memcpy, gpu_memset, cuda_kernel_like), as the
loader keeps kernels (docs/input.md); gpu_user_annotation events are
annotations, not kernels, and are left out. Traces are JSON objects with
"traceEvents" or bare lists, gzip-compressed or not.

The table is Markdown, grouped by the change (reference -> default), then by
the reason; names that look the same once cut short are one row with their
count. Each reason comes from FAMILIES below, so a name that no family
explains is printed with "?" and reported on standard error (exit status 1):
update FAMILIES and docs/taxonomy.md together with src/rules_default.c.
"""
import gzip
import json
import os
import re
import subprocess
import sys

# (pattern on the raw name, why the default differs: the family, what the
# default matches in `code`, and what the reference matched in "quotes");
# docs/taxonomy.md explains each at length
FAMILIES = [
    (r"^Cijk_", "Tensile / hipBLASLt GEMM (`cijk_`); ref: \"bias\" or no keyword"),
    (r"^nvjet_", "cuBLAS nvjet GEMM (`nvjet`); ref: \"bias\" or no keyword"),
    (r"cutlass_cudnn_train6Kernel", "cuDNN CUTLASS convolution (`cutlass_`); ref: \"dma\" in \"ThreadMap\""),
    (r"wgrad_alg0_engine|Im2d2Col", "convolution engine (`wgrad_alg`, `im2d2col`); ref: no keyword"),
    (r"^sage_", "SageAttention, attention is compute (`sage_fwd`, `sage_quant`); ref: no keyword"),
    (r"^attn_fwd$", "Triton attention (`attn_fwd`); ref: no keyword"),
    (r"cub::.*Dispatch", "cub primitive; ref: weak \"dispatch\" in `DispatchReduceByKey`"),
    (r"_combined_routing_compute|_sum_bitmatrix", "MoE routing, triton_kernels (`routing`, `bitmatrix`); "
     "ref: weak \"combine\" in \"_combined\" / none"),
    (r"^triton__", "TorchInductor fusion, pre-2.2 naming (`triton__`); ref: \"triton\""),
    (r"^triton_(poi|per|red|for)_", "TorchInductor pointwise / reduction fusion (`triton_poi_`…); "
     "ref: \"triton\""),
    (r"fbgemm_gpu::|split_embedding|bounds_check_indices|permute_pooled_embs",
     "FBGEMM sparse / quantisation / TBE: gathers (`fbgemm_gpu::`, `embedding`…); "
     "ref: \"gemm\" in \"fbgemm\" / none"),
    (r"cudnn::bn_", "cuDNN batch norm (`::bn_`); ref: \"cudnn\""),
    (r"GammaBetaBackward|RowwiseMoments", "LayerNorm / GroupNorm backward and statistics (`gammabeta`, "
     "`rowwisemoments`); ref: \"mma\" in \"Gamma\" / none"),
    (r"rms_?norm", "RMSNorm (`rms_norm`, `rmsnorm`); ref: \"conv\" in `_typeConvert`, \"flash\" in "
     "`flashinfer::`"),
    (r"NormTwoOps", "a reduction like the other `reduce_kernel`s; ref: \"norm\""),
    (r"nchwToNhwc|nhwcToNchw|batched_transpose", "layout transpose around a convolution: data movement; "
     "ref: \"cudnn\" / none"),
    (r"reshape_and_cache|store_kvcache", "KV-cache write: data movement; ref: \"flash\" / none"),
    (r"quantize_with_block_size|scaled_fp8_quant", "quantisation (`quant`); ref: \"flash\" in a "
     "`flashinfer::` argument / none"),
    (r"finalize", "MoE finalize: un-permute + weighted sum (`finalize`); ref: \"matmul\" / "
     "\"cutlass\""),
    (r"create_flashinfer_kv_indices_triton", "KV-index bookkeeping, no GEMM or attention; ref: "
     "\"flash\", \"triton\""),
]

# the order of the groups: the categories the gate and the priorities care
# about most first
CATEGORY_ORDER = ["communication", "compute", "memory", "elementwise", "other"]


def events_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            doc = json.load(fh)
    except (OSError, ValueError, EOFError):
        return None
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    return events if isinstance(events, list) else None


def collect(shared):
    names = set()
    for sub in ("corpus", "conformance"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(shared, sub)):
            dirnames.sort()
            for f in sorted(filenames):
                if not f.endswith((".json", ".json.gz")):
                    continue
                events = events_of(os.path.join(dirpath, f))
                for e in events or []:
                    if not isinstance(e, dict) or not isinstance(e.get("name"), str):
                        continue
                    cat = str(e.get("cat", "")).lower()
                    if cat == "gpu_user_annotation":
                        continue
                    if "kernel" in cat or cat.startswith("gpu_"):
                        names.add(e["name"])
    # one name a line on the classifier's standard input
    return sorted(n for n in names if "\n" not in n and "\r" not in n and n)


def classify(kerndiff, profile, names):
    out = subprocess.run([kerndiff, "rules", "--classify", "--rules", profile, "-"],
                         input="".join(n + "\n" for n in names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    cats = [line.split("\t", 1)[0] for line in out]
    if len(cats) != len(names):
        sys.exit("taxonomy_table.py: %s rules --classify gave %d lines for %d names"
                 % (kerndiff, len(cats), len(names)))
    return cats


def short(name, width=100):
    if len(name) <= width:
        return name
    head = width - 25
    return name[:head] + "…" + name[-24:]


def cell(name):
    return "`" + short(name).replace("|", "\\|").replace("`", "'") + "`"


def why_of(name):
    for pattern, why in FAMILIES:
        if re.search(pattern, name):
            return why
    return None


def main(argv):
    opts = [a for a in argv[1:] if a.startswith("--")]
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 2 or any(o not in ("--both-other", "--all") for o in opts):
        sys.exit(__doc__.split("\n\n")[1])
    kerndiff, shared = args
    names = collect(shared)
    ref = classify(kerndiff, "reference", names)
    dflt = classify(kerndiff, "default", names)
    if "--all" in opts:
        for n, r, d in zip(names, ref, dflt):
            print("%s\t%s\t%s" % (r, d, n))
        return 0
    if "--both-other" in opts:
        for n, r, d in zip(names, ref, dflt):
            if r == "other" and d == "other":
                print(n)
        return 0
    rank = {c: i for i, c in enumerate(CATEGORY_ORDER)}
    rows, unexplained = [], []
    for n, r, d in zip(names, ref, dflt):
        if r == d:
            continue
        why = why_of(n)
        if why is None:
            unexplained.append(n)
        rows.append((rank.get(d, 9), rank.get(r, 9), why or "?", n, r, d))
    rows.sort()
    print("%d of %d distinct kernel names are classified differently.\n" % (len(rows), len(names)))
    print("| kernel | reference | default | why |")
    print("| --- | --- | --- | --- |")
    # names that look the same once cut short (Tensile's long names differ in
    # the middle) are one row, with their count
    printed = []
    for _, _, why, n, r, d in rows:
        line = (cell(n), r, d, why)
        if printed and printed[-1][0] == line:
            printed[-1][1] += 1
        else:
            printed.append([line, 1])
    for (name, r, d, why), count in printed:
        print("| %s%s | %s | %s | %s |" % (name, " (%d names)" % count if count > 1 else "", r, d, why))
    for n in unexplained:
        print("taxonomy_table.py: no reason for %s" % n, file=sys.stderr)
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

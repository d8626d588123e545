#!/usr/bin/env python3
"""Writes fixtures/conformance/NAME.md: the reference's "Overlap Opportunity
Table" text (reference-behavior.md §3.6) built from the reference's own
rendered_rows of each synthetic conformance case. Run from the project root
with ../shared beside it; the goldens are committed (the synthetic cases may
be copied into the project, see ../shared/conformance/README.md)."""
import gzip, json, os, sys

SHARED = os.environ.get("KD_SHARED", "../shared")
HEADER = ["| Priority | Verdict | Kernel | Python scope | Formal signal | Dep risk | Recommendation |",
          "| --- | --- | --- | --- | --- | --- | --- |"]
EMPTY = "| - | - | No rows cleared the 1.0% reporting bar. Use mapping/formal mode for overlap attribution. | - | - | - | - |"
RISK = {"serial risk low": "low", "prev-side serial risk": "high", "next-side serial risk": "high",
        "both-side serial risk": "high", "adjacency unclear": "unclear"}
ORDER = {"extend": 0, "prefill": 0, "decode": 1, "all": 2}
DISPLAY = {"extend": "extend/prefill"}

def esc(s):
    return str(s).replace("|", "\\|").replace("\n", "<br>")

def row(r):
    sig = (f"{r['total_us']:.1f} us, share {r['share_pct']:.1f}%, "
           f"excl {r['exclusive_ratio']*100:.1f}% / hid {r['hidden_ratio']*100:.1f}%")
    return (f"| {r['priority']} | {r['verdict']} | {esc(r['kernel'])} | {esc(r['python_scope'])} | "
            f"{esc(sig)} | {RISK.get(r['dependency_signal'], r['dependency_signal'])} | {r['recommendation']} |")

def table(doc):
    rows = [(stage, r) for stage, st in doc["stages"].items() if st for r in st["rendered_rows"]]
    lines = ["Overlap Opportunity Table"]
    if not rows:
        return "\n".join(lines + HEADER + [EMPTY])
    stages = sorted({s for s, _ in rows}, key=lambda s: ORDER.get(s, 3))
    for i, stage in enumerate(stages):
        if i:
            lines.append("")
        if stages != ["all"]:
            lines.append("##### " + DISPLAY.get(stage, stage))
        lines += HEADER + [row(r) for s, r in rows if s == stage]
    return "\n".join(lines).rstrip()

def main():
    cases = json.load(open(os.path.join(SHARED, "conformance", "cases.json")))
    for case in cases:
        if not all(p.startswith("conformance/synthetic/") for p in case["formal"] + case["mapping"]):
            continue
        doc = json.load(gzip.open(os.path.join(SHARED, "conformance", "expected", case["name"] + ".json.gz")))
        with open(os.path.join("fixtures", "conformance", case["name"] + ".md"), "w") as f:
            f.write(table(doc) + "\n")

if __name__ == "__main__":
    sys.exit(main())

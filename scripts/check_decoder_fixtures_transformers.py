"""Check the decoder fixtures (scripts/make_decoder_fixtures.py) against the real Hugging Face
transformers library: each fixture directory is loaded with AutoModelForCausalLM, exactly as a
user would load a hub model, run once on expected.json's tokens, and compared with the expected
logits, attention probabilities and hidden states; its greedy continuation is compared with
generate(do_sample=False).

Needs torch and transformers (written for 5.x; 4.4x loads the classic configs too, but its
eager Qwen2/Qwen3 attention ignores sliding windows). Not part of the test suite: run it where
transformers is installed, from the repository root:

    python3 scripts/check_decoder_fixtures_transformers.py [fixture ...]

It prints one line per fixture with the largest differences and exits non-zero if any fixture
differs by more than the tolerances below, or if loading reports missing or mismatched tensors.
Head masks are not compared: transformers has no head_mask for these model types.
"""

import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
TYPES = ("llama", "mistral", "qwen2", "qwen3", "gpt_neox", "gpt_neo")
# float32 transformers against the float64 reference (weights already rounded to their dtype)
TOLERANCE = {"logits": 2e-4, "attention": 1e-4, "hidden_states": 2e-4}


def fixture_names():
    """The fixture directories whose config.json names one of TYPES."""
    names = []
    for name in sorted(os.listdir(FIXTURES)):
        path = os.path.join(FIXTURES, name, "config.json")
        if os.path.exists(path) and json.load(open(path)).get("model_type") in TYPES:
            names.append(name)
    return names


def load(path):
    """The model in float32 with eager attention (the only one that returns probabilities)."""
    kwargs = dict(attn_implementation="eager", output_loading_info=True)
    try:
        model, info = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kwargs)
    except TypeError:  # transformers 4.x names it torch_dtype
        model, info = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32, **kwargs)
    return model.eval(), info


def max_diff(got, want):
    return float((got.double() - torch.tensor(want, dtype=torch.float64)).abs().max())


def check_greedy(model, g):
    """generate(do_sample=False) from g's prompt -> [problem] (empty when it agrees)."""
    with torch.no_grad():
        run = model.generate(
            torch.tensor([g["prompt"]]), max_new_tokens=g["max_tokens"], do_sample=False, pad_token_id=0
        )
    run = run[0, len(g["prompt"]) :].tolist()
    eos = model.generation_config.eos_token_id
    eos = eos if isinstance(eos, list) else [eos]
    n = len(g["tokens"])
    if g["stop"] == "max_tokens":  # exactly the expected tokens
        agree = run == g["tokens"]
    else:  # the expected tokens, then an eos id (greedy_eos names which)
        agree = run[:n] == g["tokens"] and len(run) > n and run[n] in eos and run[n] == g.get("eos_id", run[n])
    return [] if agree else [f"greedy {run} != {g['tokens']} ({g['stop']})"]


def check(name):
    """-> (ok, report line)."""
    path = os.path.join(FIXTURES, name)
    expected = json.load(open(os.path.join(path, "expected.json")))
    model, info = load(path)
    problems = [f"{k}: {info[k]}" for k in ("missing_keys", "mismatched_keys") if info.get(k)]
    ids = torch.tensor([expected["tokens"]])
    with torch.no_grad():
        out = model(ids, output_attentions=True, output_hidden_states=True)
    diffs = {
        "logits": max_diff(out.logits[0], expected["logits"]),
        "attention": max(max_diff(a[0], e) for a, e in zip(out.attentions, expected["attention"])),
        "hidden_states": max(max_diff(h[0], e) for h, e in zip(out.hidden_states, expected["hidden_states"])),
    }
    if len(out.attentions) != len(expected["attention"]) or len(out.hidden_states) != len(expected["hidden_states"]):
        problems.append("number of attention / hidden-state entries differs")
    problems += [f"{k} differs by {v:.3g}" for k, v in diffs.items() if not v <= TOLERANCE[k]]
    runs = [expected[k] for k in ("greedy", "greedy_eos") if k in expected]
    problems += [p for g in runs for p in check_greedy(model, g)]
    unexpected = f"  ignored tensors: {len(info['unexpected_keys'])}" if info.get("unexpected_keys") else ""
    line = (
        f"{name:27s} " + "  ".join(f"{k} {v:.2e}" for k, v in diffs.items()) + f"  greedy runs {len(runs)}{unexpected}"
    )
    return not problems, line + "".join("\n    " + p for p in problems)


def main():
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    torch.set_num_threads(1)
    failed = 0
    for name in sys.argv[1:] or fixture_names():
        ok, line = check(name)
        print(("ok    " if ok else "FAIL  ") + line)
        failed += not ok
    print(f"{failed} fixture(s) differ" if failed else "all fixtures agree with transformers")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

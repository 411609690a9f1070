#!/usr/bin/env python3
"""Sets layers' strategies (and output layouts) in a plan file (docs/plan-format.md), e.g. to
run `tessera train --strategy PLAN.json` with a split the planner did not choose.

    scripts/set_plan_layers.py plan.json out.json classifier=model_parallel:feature \\
        loss=model_parallel:feature
    scripts/set_plan_layers.py plan.json out.json fc2=data_parallel     # layouts dropped

Each LAYER=STRATEGY[:LAYOUT] replaces the layer's "strategy" and its "layouts" with
{"output": LAYOUT} (without LAYOUT, "layouts" is removed: the layer takes the strategy's first
option). Exit 2 naming the layer when the plan has no such layer. Plain Python.
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[0]) as f:
        plan = json.load(f)
    layers = {layer["name"]: layer for layer in plan["layers"]}
    for setting in argv[2:]:
        name, _, value = setting.partition("=")
        strategy, _, layout = value.partition(":")
        if name not in layers or not strategy:
            sys.stderr.write(f"set_plan_layers.py: '{setting}': the plan has no layer '{name}' "
                             "or the strategy is missing (LAYER=STRATEGY[:LAYOUT])\n")
            return 2
        layers[name]["strategy"] = strategy
        if layout:
            layers[name]["layouts"] = {"output": layout}
        else:
            layers[name].pop("layouts", None)
    with open(argv[1], "w") as f:
        json.dump(plan, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

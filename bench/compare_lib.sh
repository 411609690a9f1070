# Shared by bench/compare_pytorch.sh and bench/compare_ddp.sh (sourced, not run): errors, option
# values, --help from the script's header comment, and the OpenBLAS core-type rule.
#
#   source "$here/compare_lib.sh"; script_name=compare_ddp.sh
#   need_value "$@"; ...; show_help "$0"; drop_coretype "$keep_coretype"
#   same_blas_kernels "$build/bin/tessera-step-time"

die() { echo "${script_name:-bench}: $*" >&2; exit 1; }
need_value() { [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"; }
# The comment block after the shebang, without its '# '.
show_help() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$1"; }
# An OPENBLAS_CORETYPE in the environment is dropped (OpenBLAS picks this CPU's own kernels for
# both sides) unless $1 is 1 (--keep-coretype).
drop_coretype() {
  if [[ -n ${OPENBLAS_CORETYPE:-} && $1 == 0 ]]; then
    echo "note: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE dropped: OpenBLAS picks this CPU's kernels" \
         "for both sides (--keep-coretype keeps it)"
    unset OPENBLAS_CORETYPE
  fi
}
# Both sides multiply with the kernels Tessera runs: an OpenBLAS that falls back to kernels older
# than the CPU's vector units (Debian 12's on CPUs newer than it) is switched by Tessera
# (exec/cpu/gemm.h), and torch gets the same through OPENBLAS_CORETYPE. $1: tessera-step-time.
same_blas_kernels() {
  [[ -z ${OPENBLAS_CORETYPE:-} ]] || return 0
  [[ -x $1 ]] || die "$1 not found; build it first (cmake --build build --target tessera-step-time)"
  local core
  core=$("$1" --blas-kernels 2>/dev/null) || die "$1 --blas-kernels failed"
  export OPENBLAS_CORETYPE=$core
  echo "note: OpenBLAS kernels $core on both sides (OPENBLAS_CORETYPE=$core)"
}

/*
 * Every family's corpus in one translation unit, for the include styles that are not a file's own
 * (scripts/headers-check.sh sets CORPUS_INCLUDE_STYLE).
 */
#include "sdk32.cu"
#include "sdk33.cu"
#include "sdk34.cu"
#include "os.cu"
#include "nccl.cu"

# Sourced by the scripts whose runs started from the stage-6 `base` of bench/default_model.sh (char masking +
# SOP), which stage 7 has since continued. Every clone's git history holds each bundled version, so the exact
# starting folder is read from there rather than retrained:
#   BASE_STAGE6        the stage-6 export as first bundled (BERT's 21,128-piece vocabulary), which the objective
#                      pilot, the ELECTRA long run, `cws`, the `cws-fast` teacher and the CPU ner soup started from
#   BASE_STAGE6_TRIM   the same weights with --trim-vocab (13,724 pieces, the same outputs), which stage 7 (the
#                      fill-mask run) started from
BASE_STAGE6=${BASE_STAGE6:-runs/base-stage6}
BASE_STAGE6_TRIM=${BASE_STAGE6_TRIM:-runs/base-stage6-trim}
earlier_base() {  # REVISION FOLDER: zhbert/pretrained/base as committed at REVISION, into FOLDER (once)
  [ -f "$2/config.json" ] && return 0
  mkdir -p "$2"
  git archive "$1" zhbert/pretrained/base | tar -x --strip-components=3 -C "$2"
}
earlier_base 45f501454f2b9753b1aa1628afd370fd65f8bdcf "$BASE_STAGE6"
earlier_base 748a85b234a4ec09bd351700e8c325945196af9f "$BASE_STAGE6_TRIM"

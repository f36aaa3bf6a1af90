set -e
# Megatron-LM source, first match wins: already in the workspace, shipped in the image, else a
# shallow clone. The repository URL is never echoed (it may carry credentials).
TARGET=/mnt/workspace/megatron-lm
TMP=/mnt/workspace/.megatron-lm.tmp
if [ -d "$TARGET" ]; then
  exit 0
fi
rm -rf "$TMP"
if [ -d /opt/megatron-lm ]; then
  cp -a /opt/megatron-lm "$TMP"
else
  git clone --quiet --depth 1 -b core_v0.15.2 "$MEGATRON_SOURCE_REPO" "$TMP"
fi
mv "$TMP" "$TARGET"

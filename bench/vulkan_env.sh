# Sourced by the GPU-machine scripts (run_h200.sh, run_multi.sh): unpack the
# Vulkan runtime carried in .gl/sys and point the loader at NVIDIA's ICD.
# Sets status=1 when a package does not unpack.
echo "== Vulkan runtime from .gl"
if [ -d .gl/sys ]; then
  for f in .gl/sys/*.deb; do dpkg -x "$f" / || status=1; done
  ldconfig || true
fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
           /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    break
  fi
done

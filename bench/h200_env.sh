# Sourced by the H200 scripts (run from the repository root): installs the
# Vulkan runtime that travelled in .gl/ and points the loader at NVIDIA's
# ICD. Sets status=1 when a package does not unpack.
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

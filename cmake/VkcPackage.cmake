# Debian packages from the build tree: `cpack -G DEB` (configure with
# -DCMAKE_INSTALL_PREFIX=/usr, so that libdir is Debian's multiarch one).
#   libvkc0     libvkc.so.N (SONAME libvkc.so.N); Depends from dpkg-shlibdeps,
#               plus libvulkan1, which vkc opens at run time.
#   libvkc-dev  headers, libvkc.so, libvkc.a, the CMake package with
#               VkcShaders.cmake, vkc.pc.
set(CPACK_PACKAGE_NAME vkc)
set(CPACK_PACKAGE_VENDOR "vkc")
set(CPACK_PACKAGE_CONTACT "vkc maintainers <vkc@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Vulkan compute runtime library")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://localhost/vkc")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libvkc${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libvulkan1")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "mesa-vulkan-drivers | vulkan-icd")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS "vulkan-validationlayers")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Vulkan compute runtime library\n vkc carries compute work from the CPU to the GPU: dedicated compute\n queue, reused command buffers, minimal barriers, fused elementwise kernels.")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libvkc-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# libvulkan-dev: vulkan_core.h, vulkan.pc (Requires: vulkan) and the
# VulkanHeaders CMake package the vkc targets carry. libstdc++-dev: only
# libvkc.a (static linking) needs it.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libvkc${PROJECT_VERSION_MAJOR} (= ${PROJECT_VERSION}), libvulkan-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "glslang-tools, pkg-config, libstdc++-dev")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "Vulkan compute runtime library (development files)\n Headers, shared and static library, CMake package (find_package(vkc),\n vkc_add_shaders) and pkg-config file for vkc.")
include(CPack)

# cpack -G DEB: the runtime package "mx" (programs, libmx.so.0, man pages,
# bash completion) and the development package "mx-dev" (headers, the
# libmx.so link, the CMake and pkg-config files). The runtime package's
# Depends are what dpkg-shlibdeps finds the ELF files need; mx-dev depends
# on the mx of the same version.
set(MX_PACKAGE_CONTACT "mx maintainers <maintainers@mx.invalid>" CACHE STRING
    "Maintainer of the .deb packages (name <email>)")

set(CPACK_PACKAGE_NAME mx)
set(CPACK_PACKAGE_VENDOR mx)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${MX_PACKAGE_CONTACT})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

# Each description's first line is the package's synopsis.
set(_runtime_text "deep learning on a dependency engine, compatible with MXNet 1.x
Symbolic graphs and imperative arrays on a dependency engine, with autograd,
memory planning, a key-value store for distributed training and RecordIO data
sets; reads and writes MXNet 1.x's checkpoints. The programs mx-train,
mx-predict, mx-pack, mx-export and others, and libmx.so with MXNet 1.x's C
prediction API.")
if(MX_CUDA_ENABLED)
  # NVIDIA's libraries are not Debian packages, so dpkg-shlibdeps cannot name
  # them: the packages of a CUDA build run only where they are installed.
  string(APPEND _runtime_text "\n\nThis build uses CUDA: it needs NVIDIA's CUDA runtime, cuDNN and NCCL.")
  message(STATUS "mx: .deb packages of this CUDA build need NVIDIA's CUDA runtime, cuDNN and "
                 "NCCL, which their Depends cannot name; -DMX_USE_CUDA=OFF makes packages for "
                 "any Debian machine")
endif()

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME mx)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION science)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# A shlibs file, so packages built against libmx.so.0 depend on this one.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "${_runtime_text}")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME mx-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION "development files of mx's library, libmx.so
Headers of mx's C prediction API (MXNet 1.x's names and signatures), the
libmx.so link, a CMake package (find_package(mx) gives mx::mx) and a
pkg-config file.")

include(CPack)
cpack_add_component(runtime DISPLAY_NAME "programs and libmx.so")
cpack_add_component(development DISPLAY_NAME "headers, CMake and pkg-config files"
                    DEPENDS runtime)

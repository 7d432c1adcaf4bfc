# pe_add_library(<name> <sources>... [DEPENDS <targets>...] [LINK_LIBS <libs>...])
#
# A project library: built with upstream's add_mlir_library (tablegen
# dependencies, LLVM compile flags), linked against the shared libMLIR.so, and
# installed into the PETargets export set so that find_package(PE) sees it as
# PE::<name>. Its sources reuse the precompiled header of
# PEPrecompiledHeaders (PEPrecompiledHeaders.cmake).
function(pe_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_mlir_library(${name} ${ARG_UNPARSED_ARGUMENTS}
    EXCLUDE_FROM_LIBMLIR DISABLE_INSTALL
    DEPENDS ${ARG_DEPENDS}
    LINK_LIBS PUBLIC ${ARG_LINK_LIBS} MLIR)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  pe_library_compile_flags(${name})
  pe_use_precompiled_headers(${name})
  install(TARGETS ${name} EXPORT PETargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

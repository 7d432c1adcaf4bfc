// The source of PEPrecompiledHeaders (cmake/PEPrecompiledHeaders.cmake):
// empty; the target exists for its precompiled header.

// glibc's malloc settings for a process that runs LibTorch forwards in a loop.
//
// By default glibc serves every block above a (dynamic, at most 32 MiB) threshold with its
// own mmap and gives it back with munmap when freed, and trims the heap's free top above
// 128 KiB. A forward pass frees and allocates the same activation buffers image after
// image, so each image pays for fresh zeroed pages again: page faults, which cost most in a
// virtual machine. Measured on a 2-vCPU AMD EPYC VM (issue 51, docs/BENCHMARKS.md):
// deit_small's plain forward 110 → 84 ms, the forward with maps, rank and spectra
// 210 → 157 ms. tune_allocator() keeps blocks up to 256 MiB in the heap and trims it only
// above 1 GiB of free top: a process then holds on to about its peak (up to that much more
// than it uses) instead of returning it between images.
// It does nothing when the user set glibc's malloc tunables (GLIBC_TUNABLES naming
// glibc.malloc) or ATTNLAB_MALLOC=default, and on a C library that is not glibc.
#pragma once

#include <string>

namespace attnlab::runtime {

// Applies the settings once per process; returns what it did, for `attnlab info`.
const std::string& tune_allocator();

}  // namespace attnlab::runtime

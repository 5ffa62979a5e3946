// Package toolchain identifies compilers, for pace-cc's cache keys and for matching dispatched
// compiles to workers.
//
// Two different strings come out of it. The compiler identity (banner and target) goes into every
// cache key: it changes when the compiler does, and it is the same on every machine running the
// same compiler build, so a shared cache works across machines. The toolchain fingerprint decides
// which workers may compile a client's preprocessed source: it covers what compiling preprocessed
// text depends on (the driver's banner and target, the content of its compiler proper (cc1,
// cc1plus) or clang binary, the assembler's banner, and the compiler's own resource headers) and
// deliberately not the system's library headers under /usr/include: those are already expanded
// into the preprocessed source, and hashing them would split a fleet every time one machine
// installs another -dev package.
//
// Both are expensive to compute (they run the compiler; the fingerprint hashes tens of megabytes),
// so both are cached in a directory, keyed by the compiler's resolved path and revalidated by cheap
// witnesses: size, modification time and inode of every file that went in.
package toolchain

// Package tubundle is what a gcc worker compiles (pace-wire §3.9.1): a translation unit as
// gcc's directives-only preprocessor wrote it, split back into one text per file entry, with
// the original files beside it for the compiler's diagnostics.
//
// A worker has none of the client's headers, and fully preprocessed text loses what a local
// compile records: expanded macros and collapsed whitespace move the columns that debug
// information and diagnostics report, and the macro-expansion notes are gone. gcc's
// directives-only output keeps every source line as written, with includes and conditionals
// resolved and the macro definitions in place, so a worker that preprocesses it again expands
// the macros where the local compile did. gcc would pedwarn about its own line markers under
// -pedantic and record -fdirectives-only in DW_AT_producer, so the worker does not read
// markers: Build turns every file entry into a region of its own, reached by an #include of
// a scratch name, which starts with a standard #line naming the file by a synthetic name
// (pace-f/NNNNNN/<base name>). The worker writes each original file under that name, so the
// caret lines and -Wmisleading-indentation read the client's text, and maps each synthetic
// name back with -fdebug-prefix-map and -fmacro-prefix-map to the name a local compile
// records. System headers sit in a directory given with -isystem, the command-line macros
// are the worker's -D options, forced includes its -include options.
//
// The client side: Build (from the directives-only text, reading the originals through a
// callback), Encode, and Localize, which maps the worker's diagnostics back to the client's
// names or says they cannot be. The worker side: Decode (bounded before anything is
// allocated), Screen (no directive but #define, #undef, #pragma, #ident, the synthetic
// #include and #line forms: no file the worker did not write can be opened), and Layout (the
// files to write and the compiler options to add). The package does no I/O.
package tubundle

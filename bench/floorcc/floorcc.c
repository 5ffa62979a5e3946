/* floorcc: the floor of a warm build, for scripts/bench-cc.sh: what a build costs when every
 * compile is replaced by copying back what it wrote the first time, at the price of one small C
 * process. It is not a cache anyone should use: it keys a compile by where its object goes and
 * a dependency listing (-M/-MM without -c) by its working directory and command line, and it
 * never looks at an input.
 *
 *   floorcc COMPILER ARGS...   FLOORCC_DIR: the store; FLOORCC_MODE=record runs the compiler and
 *                              saves its object and depfile (or its listing); otherwise what is
 *                              saved is copied back and nothing runs. Anything else runs the
 *                              compiler as given. */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int copy_fd(int in, int out) {
  struct stat st;
  if (fstat(in, &st) != 0) return -1;
  off_t off = 0;
  while (off < st.st_size)
    if (sendfile(out, in, &off, st.st_size - off) <= 0) return -1;
  return 0;
}

static int copy(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out;
  if (in < 0) return -1;
  if (to == NULL) out = 1;
  else if ((out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0) { close(in); return -1; }
  int rc = copy_fd(in, out);
  close(in);
  if (out != 1) close(out);
  return rc;
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (h ^ 0xff) * 1099511628211ULL;
}

/* run_to: runs argv with its standard output to fd (or inherited when fd < 0). */
static int run_to(char **argv, int fd) {
  pid_t p = fork();
  if (p == 0) {
    if (fd >= 0) dup2(fd, 1);
    execvp(argv[0], argv);
    _exit(127);
  }
  int s = 0;
  waitpid(p, &s, 0);
  return WIFEXITED(s) ? WEXITSTATUS(s) : 1;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *out = NULL, *mf = NULL, *src = NULL, *dir = getenv("FLOORCC_DIR");
  int compile = 0, listing = 0, deps = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(a, "-MF") && i + 1 < argc) mf = argv[++i];
    else if (!strcmp(a, "-MT") || !strcmp(a, "-MQ")) i++;
    else if (!strcmp(a, "-c")) compile = 1;
    else if (!strcmp(a, "-M") || !strcmp(a, "-MM")) listing = 1;
    else if (!strcmp(a, "-MD") || !strcmp(a, "-MMD")) deps = 1;
    else if (a[0] != '-') src = a;
  }
  int record = getenv("FLOORCC_MODE") && !strcmp(getenv("FLOORCC_MODE"), "record");
  char cwd[PATH_MAX], key[PATH_MAX], dkey[PATH_MAX + 8], obj[PATH_MAX], dep[PATH_MAX];
  if (!dir || !getcwd(cwd, sizeof cwd) || (!compile && !listing) || (compile && listing)) goto plain;
  if (listing) {
    uint64_t h = fnv(1469598103934665603ULL, cwd);
    for (int i = 1; i < argc; i++) h = fnv(h, argv[i]);
    snprintf(key, sizeof key, "%s/listing-%016llx", dir, (unsigned long long)h);
    if (!record) return copy(key, NULL) == 0 ? 0 : run_to(argv + 1, -1);
    int fd = open(key, O_RDWR | O_CREAT | O_TRUNC, 0644);
    int rc = run_to(argv + 1, fd);
    lseek(fd, 0, SEEK_SET);
    copy_fd(fd, 1);
    close(fd);
    return rc;
  }
  if (!out && src) { /* gcc's own default: the source's base name with .o, here */
    const char *b = strrchr(src, '/');
    snprintf(obj, sizeof obj, "%s", b ? b + 1 : src);
    char *dot = strrchr(obj, '.');
    if (dot) strcpy(dot, ".o");
    out = obj;
  }
  if (!out) goto plain;
  snprintf(dep, sizeof dep, "%s", mf ? mf : out);
  if (!mf) { char *dot = strrchr(dep, '.'); if (dot) strcpy(dot, ".d"); }
  uint64_t h = fnv(fnv(1469598103934665603ULL, cwd), out);
  snprintf(key, sizeof key, "%s/object-%016llx", dir, (unsigned long long)h);
  snprintf(dkey, sizeof dkey, "%s.d", key);
  if (!record) {
    if (copy(key, out) == 0 && (!deps || copy(dkey, dep) == 0)) return 0;
    goto plain;
  }
  int rc = run_to(argv + 1, -1);
  if (rc == 0) { copy(out, key); if (deps) copy(dep, dkey); }
  return rc;
plain:
  execvp(argv[1], argv + 1);
  return 127;
}

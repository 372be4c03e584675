/*
** The wrapper around SQLite's benchmark program test/speedtest1.c that lets it run inside
** the commitlab process on a commitlab device (crates/sqlite/src/speedtest1.rs builds it).
**
** speedtest1.c is not part of this repository: it is read at build time from the path in
** ST1_SOURCE (Debian's sqlite3 source package, scripts/fetch-speedtest1.sh) and included
** below, unchanged. The result is a shared object that calls the SQLite linked into the
** process that loads it (the bundled library the VFS is registered with) through the
** sqlite3_api_routines table, as a loadable extension does (sqlite3ext.h): the commitlab
** binary does not export the sqlite3_* symbols, and the table is the one SQLite hands to
** extensions.
**
** What the macros below change, and only for speedtest1's code (every system header is
** included first, so their declarations keep the real names):
** - main            -> speedtest1_main, called by st1_run;
** - exit            -> longjmp back to st1_run (speedtest1 exits on a fatal error);
** - printf, fprintf, vfprintf, fwrite, fflush on stdout / stderr
**                   -> the host's output callback (files named by --script / --output
**                      are still written to directly);
** - unlink          -> nothing: the database lives on the device (speedtest1 removes it
**                      with the VFS's xDelete first, and then unlinks the host path);
** - sqlite3_vfs_find(0), the VFS speedtest1 reads its clock from
**                   -> a VFS whose only methods are the clock of the host's VFS, so the
**                      per-test times are simulated device time, and an xDelete that
**                      deletes nothing;
** - sqlite3_open_v2 -> the same, then a commit hook and a rollback hook that tell the host
**                      (transactions and commit latency); sqlite3_step and sqlite3_exec
**                      tell the host when they return (the end of a commit);
** - sqlite3_initialize -> SQLITE_OK (the host initialised the library); sqlite3_config
**                      -> SQLITE_MISUSE (too late once initialised; the host refuses the
**                      options that need it); neither is in the routines table;
** - sqlite3_rtree_geometry_callback (not in the table) -> the host's pointer to it.
*/
#include <assert.h>
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

/* Must match `Host` in speedtest1.rs. */
typedef struct St1Host {
  void *ctx;
  /* stream 1: standard output, 2: standard error */
  void (*out)(void *ctx, int stream, const char *z, int n);
  void (*commit)(void *ctx);
  void (*rollback)(void *ctx);
  void (*call_end)(void *ctx);
  int (*rtree_geometry_callback)(
    sqlite3*, const char*,
    int(*)(sqlite3_rtree_geometry*, int, sqlite3_rtree_dbl*, int*), void*);
  const char *clock_vfs;  /* name of the VFS whose clock speedtest1 reads; 0: default */
} St1Host;

static St1Host st1_host;
static jmp_buf st1_jmp;
static int st1_exit_code;

static void st1_emit(int stream, const char *zFmt, va_list ap){
  char buf[512];
  va_list ap2;
  int n;
  va_copy(ap2, ap);
  n = vsnprintf(buf, sizeof(buf), zFmt, ap2);
  va_end(ap2);
  if( n<0 ) return;
  if( (size_t)n<sizeof(buf) ){
    st1_host.out(st1_host.ctx, stream, buf, n);
  }else{
    char *z = malloc((size_t)n+1);
    if( z==0 ) return;
    vsnprintf(z, (size_t)n+1, zFmt, ap);
    st1_host.out(st1_host.ctx, stream, z, n);
    free(z);
  }
}

static int st1_stream(FILE *f){
  if( f==stdout ) return 1;
  if( f==stderr ) return 2;
  return 0;
}

static int st1_printf(const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  st1_emit(1, zFmt, ap);
  va_end(ap);
  return 0;
}

static int st1_vfprintf(FILE *f, const char *zFmt, va_list ap){
  int s = st1_stream(f);
  if( s==0 ) return vfprintf(f, zFmt, ap);
  st1_emit(s, zFmt, ap);
  return 0;
}

static int st1_fprintf(FILE *f, const char *zFmt, ...){
  va_list ap;
  int rc;
  va_start(ap, zFmt);
  rc = st1_vfprintf(f, zFmt, ap);
  va_end(ap);
  return rc;
}

static size_t st1_fwrite(const void *p, size_t sz, size_t n, FILE *f){
  int s = st1_stream(f);
  if( s==0 ) return fwrite(p, sz, n, f);
  st1_host.out(st1_host.ctx, s, (const char*)p, (int)(sz*n));
  return n;
}

static int st1_fflush(FILE *f){
  if( f==0 || st1_stream(f) ) return 0;
  return fflush(f);
}

static void st1_exit(int code) __attribute__((noreturn));
static void st1_exit(int code){
  st1_exit_code = code;
  longjmp(st1_jmp, 1);
}

static int st1_unlink(const char *zPath){
  (void)zPath;
  return 0;
}

/* The clock: a VFS with only xCurrentTime / xCurrentTimeInt64, forwarding to the VFS
** named in the host (looked up at each call, so speedtest1's cached pointer to this one
** never dangles between runs). */
static sqlite3_vfs *st1_clock_target(void){
  return sqlite3_api->vfs_find(st1_host.clock_vfs);
}
static int st1_clock_int64(sqlite3_vfs *p, sqlite3_int64 *pOut){
  sqlite3_vfs *t = st1_clock_target();
  (void)p;
  if( t->iVersion>=2 && t->xCurrentTimeInt64 ) return t->xCurrentTimeInt64(t, pOut);
  {
    double r = 0.0;
    int rc = t->xCurrentTime(t, &r);
    *pOut = (sqlite3_int64)(r*86400000.0);
    return rc;
  }
}
static int st1_clock_double(sqlite3_vfs *p, double *pOut){
  sqlite3_int64 t = 0;
  int rc = st1_clock_int64(p, &t);
  *pOut = t/86400000.0;
  return rc;
}
/* speedtest1 deletes its database first with xDelete of the VFS sqlite3_vfs_find(zVfs)
** names; without --vfs (the in-memory run) that is this one, and nothing is to be deleted
** (the host's files are never touched). */
static int st1_clock_delete(sqlite3_vfs *p, const char *zName, int syncDir){
  (void)p; (void)zName; (void)syncDir;
  return SQLITE_OK;
}
static sqlite3_vfs st1_clock_vfs = {
  2, 0, 0, 0, "commitlab-speedtest1-clock", 0,
  0, st1_clock_delete, 0, 0, 0, 0, 0, 0, 0, 0,
  st1_clock_double, 0, st1_clock_int64, 0, 0, 0
};
static sqlite3_vfs *st1_vfs_find(const char *zName){
  if( zName==0 ) return &st1_clock_vfs;
  return sqlite3_api->vfs_find(zName);
}

static int st1_on_commit(void *p){
  (void)p;
  st1_host.commit(st1_host.ctx);
  return 0;
}
static void st1_on_rollback(void *p){
  (void)p;
  st1_host.rollback(st1_host.ctx);
}
static int st1_open_v2(const char *zName, sqlite3 **ppDb, int flags, const char *zVfs){
  int rc = sqlite3_api->open_v2(zName, ppDb, flags, zVfs);
  if( rc==SQLITE_OK && *ppDb ){
    sqlite3_api->commit_hook(*ppDb, st1_on_commit, 0);
    sqlite3_api->rollback_hook(*ppDb, st1_on_rollback, 0);
  }
  return rc;
}
static int st1_step(sqlite3_stmt *p){
  int rc = sqlite3_api->step(p);
  st1_host.call_end(st1_host.ctx);
  return rc;
}
static int st1_exec(sqlite3 *db, const char *zSql,
                    int (*xCb)(void*, int, char**, char**), void *pArg, char **pzErr){
  int rc = sqlite3_api->exec(db, zSql, xCb, pArg, pzErr);
  st1_host.call_end(st1_host.ctx);
  return rc;
}
static int st1_initialize(void){ return SQLITE_OK; }
static int st1_config(int op, ...){ (void)op; return SQLITE_MISUSE; }

#define main speedtest1_main
#define exit st1_exit
#define printf st1_printf
#define fprintf st1_fprintf
#define vfprintf st1_vfprintf
#define fwrite st1_fwrite
#define fflush st1_fflush
#define unlink st1_unlink
#undef sqlite3_vfs_find
#define sqlite3_vfs_find st1_vfs_find
#undef sqlite3_open_v2
#define sqlite3_open_v2 st1_open_v2
#undef sqlite3_step
#define sqlite3_step st1_step
#undef sqlite3_exec
#define sqlite3_exec st1_exec
#undef sqlite3_initialize
#define sqlite3_initialize st1_initialize
#undef sqlite3_config
#define sqlite3_config st1_config
#undef sqlite3_rtree_geometry_callback
#define sqlite3_rtree_geometry_callback st1_host.rtree_geometry_callback

#include ST1_SOURCE

#undef main
#undef exit

/* Runs speedtest1's main once with the host's callbacks; returns its exit code (0, or
** the code speedtest1 passed to exit). speedtest1's global state starts from zero on
** every run. */
int commitlab_speedtest1_run(
  const sqlite3_api_routines *pApi, const St1Host *pHost, int argc, char **argv
){
  sqlite3_api = pApi;
  st1_host = *pHost;
  memset(&g, 0, sizeof(g));
  iTestNumber = 0;
  st1_exit_code = 0;
  if( setjmp(st1_jmp) ){
    return st1_exit_code;
  }
  return speedtest1_main(argc, argv);
}

/* test_ofile.c: output files (ofile.h) and bounded input reads (rfile.h): a new file appears
 * whole with the umask's mode; a replaced file keeps its mode; a symlink is written through;
 * devices are written in place (and /dev/full fails at commit); inputs, directories, dangling
 * links and FIFOs with no reader are refused; signals remove the temporary file and kill
 * with the signal; the reader caps sizes and refuses directories. */
#define _GNU_SOURCE /* syscall(SYS_capset) for the read-only test as root */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <unistd.h>

#include "ofile.h"
#include "rfile.h"

typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/tpsim-test-ofile.XXXXXX");
    if (!mkdtemp(fx->dir)) return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    if (system(cmd) != 0) return -1;
    free(fx);
    /* the fixture's inputs are gone: their inodes may come back as the next test's outputs */
    rfile_forget_inputs();
    return 0;
}

static void in_dir(const fixture *fx, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", fx->dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_content(const char *path, const char *want)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, want);
}

/* How many entries the fixture directory holds (a leftover temporary file counts). */
/* The forked child PID ended by signal SIG (its default action). */
static void wait_killed_by(pid_t pid, int sig)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);
}

static int count_entries(const fixture *fx)
{
    DIR *d = opendir(fx->dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void test_new_file_umask(void **state)
{
    fixture *fx = *state;
    char p[128];
    in_dir(fx, "new.csv", p, sizeof p);
    mode_t old = umask(077);
    ofile o;
    tp_err e;
    assert_int_equal(ofile_open(&o, p, &e), 0);
    fputs("a,b\n", o.f);
    struct stat st;
    assert_int_equal(stat(p, &st), -1); /* not there until commit */
    assert_int_equal(ofile_flush(&o, &e), 0);
    assert_int_equal(stat(p, &st), -1); /* flushed, still not there */
    assert_int_equal(ofile_commit(&o, &e), 0);
    umask(old);
    assert_content(p, "a,b\n");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600); /* 0666 less umask 077 */
    umask(022);
    char q[128];
    in_dir(fx, "new2.csv", q, sizeof q);
    assert_int_equal(ofile_open(&o, q, &e), 0);
    assert_int_equal(ofile_commit(&o, &e), 0);
    umask(old);
    assert_int_equal(stat(q, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(count_entries(fx), 2);
}

/* Root without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, effective and
 * permitted (access(2) gives root its permitted set back): it obeys a file's mode bits like
 * its owner. Dropping capabilities needs no privilege, so this works in any container. */
static int drop_dac_override(void)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data)) return -1;
    const int drop[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER};
    for (int i = 0; i < 3; i++) {
        unsigned bit = 1u << (drop[i] % 32);
        data[drop[i] / 32].effective &= ~bit;
        data[drop[i] / 32].permitted &= ~bit;
        data[drop[i] / 32].inheritable &= ~bit;
    }
    return syscall(SYS_capset, &hdr, data) ? -1 : 0;
}

static void test_replace_keeps_mode_and_inode_changes(void **state)
{
    fixture *fx = *state;
    char p[128];
    in_dir(fx, "old.yaml", p, sizeof p);
    write_text(p, "old\n");
    assert_int_equal(chmod(p, 0640), 0);
    struct stat before, after;
    assert_int_equal(stat(p, &before), 0);
    ofile o;
    tp_err e;
    assert_int_equal(ofile_open(&o, p, &e), 0);
    fputs("new\n", o.f);
    assert_content(p, "old\n"); /* untouched while writing */
    assert_int_equal(ofile_commit(&o, &e), 0);
    assert_content(p, "new\n");
    assert_int_equal(stat(p, &after), 0);
    assert_int_equal(after.st_mode & 07777, 0640);
    assert_true(after.st_ino != before.st_ino); /* replaced by rename, not rewritten */
    /* a file its owner made read-only is not replaced; as root (CI) the check runs in a
     * child that gave up the capabilities that let root write anything */
    assert_int_equal(chmod(p, 0440), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && drop_dac_override()) _exit(3);
        if (ofile_open(&o, p, &e) != -1) _exit(1);
        _exit(strstr(e.msg, "Permission denied") ? 0 : 2);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* 1: replaced, 2: another error, 3: no capset */
    assert_int_equal(chmod(p, 0640), 0);
    /* abort leaves the old content and no temporary file */
    assert_int_equal(ofile_open(&o, p, &e), 0);
    fputs("partial", o.f);
    ofile_abort(&o);
    assert_content(p, "new\n");
    assert_int_equal(count_entries(fx), 1);
}

static void test_symlink_written_through(void **state)
{
    fixture *fx = *state;
    char target[128], link[128], dangling[128];
    in_dir(fx, "real.csv", target, sizeof target);
    in_dir(fx, "link.csv", link, sizeof link);
    in_dir(fx, "dangling.csv", dangling, sizeof dangling);
    write_text(target, "old\n");
    assert_int_equal(symlink("real.csv", link), 0);
    ofile o;
    tp_err e;
    assert_int_equal(ofile_open(&o, link, &e), 0);
    fputs("through\n", o.f);
    assert_int_equal(ofile_commit(&o, &e), 0);
    struct stat lst;
    assert_int_equal(lstat(link, &lst), 0);
    assert_true(S_ISLNK(lst.st_mode)); /* still a link */
    assert_content(target, "through\n");
    assert_int_equal(symlink("nowhere/x.csv", dangling), 0);
    assert_int_equal(ofile_open(&o, dangling, &e), -1);
    assert_non_null(strstr(e.msg, "symlink to a missing file"));
    assert_int_equal(count_entries(fx), 3);
}

static void test_devices_in_place(void **state)
{
    (void)state;
    ofile o;
    tp_err e;
    struct stat before, after;
    assert_int_equal(stat("/dev/null", &before), 0);
    assert_int_equal(ofile_open(&o, "/dev/null", &e), 0);
    assert_true(o.in_place);
    fputs("discarded\n", o.f);
    assert_int_equal(ofile_commit(&o, &e), 0);
    assert_int_equal(stat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev);
    /* /dev/full: the device stays, the write fails at commit with the reason */
    assert_int_equal(ofile_open(&o, "/dev/full", &e), 0);
    fputs("lost\n", o.f);
    assert_int_equal(ofile_commit(&o, &e), -1);
    assert_non_null(strstr(e.msg, "/dev/full: cannot write"));
    assert_non_null(strstr(e.msg, "No space left"));
    assert_int_equal(stat("/dev/full", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    /* ofile_flush pushes the bytes out without publishing: the failure comes there */
    assert_int_equal(ofile_open(&o, "/dev/full", &e), 0);
    fputs("lost\n", o.f);
    assert_int_equal(ofile_flush(&o, &e), -1);
    assert_non_null(strstr(e.msg, "/dev/full: cannot write: No space left"));
    ofile_abort(&o);
}

static void test_refusals(void **state)
{
    fixture *fx = *state;
    ofile o;
    tp_err e;
    assert_int_equal(ofile_open(&o, fx->dir, &e), -1);
    assert_non_null(strstr(e.msg, "is a directory"));
    assert_int_equal(ofile_open(&o, "", &e), -1);
    char fifo[128];
    in_dir(fx, "fifo", fifo, sizeof fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(ofile_open(&o, fifo, &e), -1); /* no reader: refused, not waited on */
    assert_non_null(strstr(e.msg, "FIFO with no reader"));
    /* an input of this run */
    char in[128];
    in_dir(fx, "input.yaml", in, sizeof in);
    write_text(in, "a: 1\n");
    char *buf;
    size_t len;
    assert_int_equal(rfile_read(in, 1024, "a YAML file", &buf, &len, &e), 0);
    assert_int_equal(len, 5);
    assert_string_equal(buf, "a: 1\n");
    free(buf);
    assert_int_equal(ofile_open(&o, in, &e), -1);
    assert_non_null(strstr(e.msg, "is one of this run's inputs"));
    char link[128];
    in_dir(fx, "input-link.yaml", link, sizeof link);
    assert_int_equal(symlink("input.yaml", link), 0);
    assert_int_equal(ofile_open(&o, link, &e), -1); /* also through a link */
    assert_content(in, "a: 1\n");
    assert_int_equal(count_entries(fx), 3);
    /* forgotten inputs are outputs like any file (teardown forgets them: see there) */
    struct stat st;
    assert_int_equal(stat(in, &st), 0);
    assert_int_equal(rfile_is_input(&st), 1);
    rfile_forget_inputs();
    assert_int_equal(rfile_is_input(&st), 0);
    assert_int_equal(ofile_open(&o, in, &e), 0);
    ofile_abort(&o);
}

/* ofile_refuse_inputs: the output named by the inputs' list (not yet read) is refused by
 * name, through a symlink either way and a hard link; another file, a new path and "-" pass. */
static void test_refuse_inputs(void **state)
{
    fixture *fx = *state;
    tp_err e;
    char a[128], b[128], ln[128], hard[128], fresh[128];
    in_dir(fx, "a.json", a, sizeof a);
    in_dir(fx, "b.json", b, sizeof b);
    in_dir(fx, "ln.json", ln, sizeof ln);
    in_dir(fx, "hard.json", hard, sizeof hard);
    in_dir(fx, "fresh.json", fresh, sizeof fresh);
    write_text(a, "A");
    write_text(b, "B");
    assert_int_equal(symlink("a.json", ln), 0);
    assert_int_equal(link(a, hard), 0);
    const char *in[] = {b, a};
    assert_int_equal(ofile_refuse_inputs(a, in, 2, &e), -1);
    assert_non_null(strstr(e.msg, "is the input"));
    assert_null(strstr(e.msg, "the same file")); /* named as given */
    assert_int_equal(ofile_refuse_inputs(ln, in, 2, &e), -1);
    assert_non_null(strstr(e.msg, "(the same file)"));
    assert_int_equal(ofile_refuse_inputs(hard, in, 2, &e), -1);
    const char *via_link[] = {ln};
    assert_int_equal(ofile_refuse_inputs(a, via_link, 1, &e), -1);
    assert_int_equal(ofile_refuse_inputs(fresh, in, 2, &e), 0);
    assert_int_equal(ofile_refuse_inputs("-", in, 2, &e), 0);
    assert_int_equal(ofile_refuse_inputs(a, in, 1, &e), 0); /* b only */
    assert_int_equal(ofile_refuse_inputs("/dev/null", in, 2, &e), 0);
    assert_content(a, "A");
}

/* ofile_commit refuses to replace its target once stdout has failed: a child whose stdout
 * is /dev/full writes a report, then commits; the old content stays and no temporary is
 * left. */
static void test_commit_after_stdout_failed(void **state)
{
    fixture *fx = *state;
    char out[128];
    in_dir(fx, "out.csv", out, sizeof out);
    write_text(out, "old");
    if (access("/dev/full", W_OK) != 0) skip();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/full", "w", stdout)) _exit(3);
        ofile o;
        tp_err e;
        if (ofile_open(&o, out, &e)) _exit(4);
        fputs("new", o.f);
        printf("a report\n");
        int rc = ofile_commit(&o, &e);
        _exit(rc == -1 && strstr(e.msg, "cannot write to stdout") ? 0 : 5);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_content(out, "old");
    assert_int_equal(count_entries(fx), 1);
}

/* A child opens an output, writes, and is killed by `sig` before committing: it dies of that
 * signal and leaves no temporary file (and no target). */
static void killed_while_writing(const fixture *fx, int sig)
{
    char p[128];
    in_dir(fx, "killed.json", p, sizeof p);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        ofile o;
        tp_err e;
        if (ofile_open(&o, p, &e)) _exit(3);
        fputs("{\"partial\":", o.f);
        fflush(o.f);
        raise(sig);
        _exit(4); /* not reached */
    }
    wait_killed_by(pid, sig);
    assert_int_equal(count_entries(fx), 0);
}

static void test_signals_remove_temp(void **state)
{
    fixture *fx = *state;
    killed_while_writing(fx, SIGINT);
    killed_while_writing(fx, SIGTERM);
    killed_while_writing(fx, SIGHUP);
}

/* Scratch paths guarded directly (plot's staging directory): a signal removes the files,
 * then the directory. */
static void test_guarded_scratch_directory(void **state)
{
    fixture *fx = *state;
    char stage[128], a[160], b[160];
    in_dir(fx, ".plot.stage", stage, sizeof stage);
    snprintf(a, sizeof a, "%s/a.png", stage);
    snprintf(b, sizeof b, "%s/b.svg", stage);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (mkdir(stage, 0700) != 0) _exit(3);
        int slots[3] = {ofile_guard(stage), ofile_guard(a), ofile_guard(b)};
        if (slots[0] < 0 || slots[1] < 0 || slots[2] < 0) _exit(4);
        FILE *f = fopen(a, "w");
        if (!f || fputs("png", f) < 0 || fclose(f) != 0) _exit(5);
        raise(SIGTERM);
        _exit(6);
    }
    wait_killed_by(pid, SIGTERM);
    assert_int_equal(count_entries(fx), 0);
    /* released slots are not touched: a kept file survives the next signal */
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int slot = ofile_guard(a);
        if (mkdir(stage, 0700) != 0 || slot < 0) _exit(3);
        FILE *f = fopen(a, "w");
        if (!f || fclose(f) != 0) _exit(5);
        ofile_guard_release(slot);
        raise(SIGTERM);
        _exit(6);
    }
    wait_killed_by(pid, SIGTERM);
    struct stat st;
    assert_int_equal(stat(a, &st), 0);
}




/* A child started by ofile_fork_guarded (gnuplot) is killed and reaped by the guard before it
 * cleans up. The child would write a file as soon as its parent is gone (EOF on `go`, whose
 * last write end the parent holds); the test learns that the child has ended from EOF on
 * `done`. No sleeps: a child the guard did not kill always writes its file. */
static void test_guarded_child(void **state)
{
    fixture *fx = *state;
    char stage[128], late[160];
    in_dir(fx, "stage", stage, sizeof stage);
    snprintf(late, sizeof late, "%s/late", fx->dir);
    int go[2], done[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(done[0]);
        int slot;
        if (ofile_mkdir_guarded(stage, 0777, &slot) != 0) _exit(3);
        pid_t child = ofile_fork_guarded();
        if (child < 0) _exit(4);
        if (child == 0) {
            char b;
            close(go[1]);
            while (read(go[0], &b, 1) > 0) {}
            FILE *f = fopen(late, "w");
            if (f) fclose(f);
            _exit(0);
        }
        raise(SIGTERM);
        _exit(7);
    }
    close(go[0]);
    close(go[1]);
    close(done[1]);
    wait_killed_by(pid, SIGTERM);
    char b;
    while (read(done[0], &b, 1) > 0) {}
    close(done[0]);
    assert_int_equal(count_entries(fx), 0);
}


/* A folder's files guarded by leaf name as one entry (a figure set): a signal removes the
 * leaves registered, grown by ofile_guard_files_update, then the folder. A signal that
 * arrives while the signals are held waits: what is released meanwhile stays. */
static void test_guarded_files(void **state)
{
    fixture *fx = *state;
    char stage[128], p[200];
    static char leaves[3][16] = {"gnuplot.log", "a.png", "a.svg"};
    in_dir(fx, "stage", stage, sizeof stage);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ds, fs;
        if (ofile_mkdir_guarded(stage, 0777, &ds) != 0 || ds < 0) _exit(3);
        if ((fs = ofile_guard_files(stage, leaves[0], sizeof leaves[0], 1)) < 0) _exit(4);
        ofile_guard_files_update(fs, leaves[0], 3);
        for (int i = 0; i < 3; i++) {
            snprintf(p, sizeof p, "%s/%s", stage, leaves[i]);
            FILE *f = fopen(p, "w");
            if (!f || fclose(f) != 0) _exit(5);
        }
        raise(SIGTERM);
        _exit(7);
    }
    wait_killed_by(pid, SIGTERM);
    assert_int_equal(count_entries(fx), 0);

    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ds, fs;
        sigset_t before;
        if (ofile_mkdir_guarded(stage, 0777, &ds) != 0) _exit(3);
        if ((fs = ofile_guard_files(stage, leaves[0], sizeof leaves[0], 3)) < 0) _exit(4);
        snprintf(p, sizeof p, "%s/%s", stage, leaves[1]);
        FILE *f = fopen(p, "w");
        if (!f || fclose(f) != 0) _exit(5);
        ofile_signals_hold(&before);
        raise(SIGTERM); /* held: the set is "installed" before it can act */
        ofile_guard_files_release(fs);
        ofile_guard_release(ds);
        ofile_signals_restore(&before);
        _exit(7);
    }
    wait_killed_by(pid, SIGTERM);
    snprintf(p, sizeof p, "%s/%s", stage, leaves[1]);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
}

/* Folders made by ofile_mkdir_guarded/ofile_mkdtemp_guarded are guarded from birth; a signal
 * removes them all, even a parent that holds a lower-priority slot than its child (the
 * handler's passes), and a folder that was there already is never registered. */
static void test_guarded_mkdir(void **state)
{
    fixture *fx = *state;
    char outer[128], inner[160], tmpl[192], dummy[128];
    in_dir(fx, "out", outer, sizeof outer);
    snprintf(inner, sizeof inner, "%s/figs", outer);
    snprintf(tmpl, sizeof tmpl, "%s/.plot.XXXXXX", inner);
    in_dir(fx, "dummy", dummy, sizeof dummy);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int d = ofile_guard(dummy), so, si, st, again;
        if (ofile_mkdir_guarded(outer, 0777, &so) != 0 || so < 0) _exit(3);
        ofile_guard_release(d); /* the inner folder takes the slot before its parent's */
        if (ofile_mkdir_guarded(inner, 0777, &si) != 0 || si < 0 || si > so) _exit(4);
        if (!ofile_mkdtemp_guarded(tmpl, &st) || st < 0) _exit(5);
        if (ofile_mkdir_guarded(outer, 0777, &again) != -1 || errno != EEXIST || again != -1)
            _exit(6);
        raise(SIGTERM);
        _exit(7);
    }
    wait_killed_by(pid, SIGTERM);
    assert_int_equal(count_entries(fx), 0);
    /* a folder that existed before is left alone by the signal */
    assert_int_equal(mkdir(outer, 0700), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int so;
        if (ofile_mkdir_guarded(outer, 0777, &so) != -1 || so != -1) _exit(3);
        raise(SIGTERM);
        _exit(7);
    }
    wait_killed_by(pid, SIGTERM);
    struct stat sb;
    assert_int_equal(stat(outer, &sb), 0);
    assert_int_equal(rmdir(outer), 0);
}
static void test_reader_bounds(void **state)
{
    fixture *fx = *state;
    tp_err e;
    char *buf;
    size_t len;
    char p[128];
    in_dir(fx, "big.csv", p, sizeof p);
    write_text(p, "0123456789");
    assert_int_equal(rfile_read(p, 9, "a CSV grid", &buf, &len, &e), -1);
    assert_non_null(strstr(e.msg, "larger than 9 bytes, expected a CSV grid"));
    assert_int_equal(rfile_read(p, 10, "a CSV grid", &buf, &len, &e), 0);
    assert_int_equal(len, 10);
    assert_int_equal(buf[10], '\0');
    free(buf);
    assert_int_equal(rfile_read("/dev/zero", (size_t)1 << 20, "a YAML file", &buf, &len, &e), -1);
    assert_non_null(strstr(e.msg, "/dev/zero: more than 1 MiB of input, expected a YAML file"));
    assert_int_equal(rfile_read(fx->dir, 100, "a YAML file", &buf, &len, &e), -1);
    assert_non_null(strstr(e.msg, "cannot open: is a directory, expected a YAML file"));
    assert_int_equal(rfile_read("/dev/null", 100, "a YAML file", &buf, &len, &e), 0);
    assert_int_equal(len, 0);
    free(buf);
    /* for streaming readers: regular files only */
    assert_int_equal(rfile_check_regular(p, 100, "a trace", &e), 0);
    assert_int_equal(rfile_check_regular(p, 9, "a trace", &e), -1);
    assert_non_null(strstr(e.msg, "larger than 9 bytes"));
    assert_int_equal(rfile_check_regular("/dev/zero", 100, "a trace", &e), -1);
    assert_non_null(strstr(e.msg, "/dev/zero: not a regular file"));
    char fifo[128];
    in_dir(fx, "in.fifo", fifo, sizeof fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(rfile_check_regular(fifo, 100, "a trace", &e), -1);
    assert_int_equal(rfile_check_regular(fx->dir, 100, "a trace", &e), -1);
    assert_non_null(strstr(e.msg, "is a directory"));
    /* a pipe whose writer has written and closed reads whole */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "k: v\n", 5), 5);
    close(fds[1]);
    char dev[64];
    snprintf(dev, sizeof dev, "/dev/fd/%d", fds[0]);
    assert_int_equal(rfile_read(dev, 100, "a YAML file", &buf, &len, &e), 0);
    assert_string_equal(buf, "k: v\n");
    free(buf);
    close(fds[0]);
}

int main(void)
{
    /* The signal tests need the default dispositions: a background job of a non-interactive
     * shell starts with SIGINT ignored and a nohup'd one with SIGHUP ignored, and ofile keeps an
     * inherited SIG_IGN (it must not make a nohup'd tpsim killable by a hang-up). */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_file_umask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_keeps_mode_and_inode_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_written_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_after_stdout_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signals_remove_temp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guarded_scratch_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guarded_mkdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guarded_child, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guarded_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader_bounds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

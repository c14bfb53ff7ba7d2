/*
 * sim/sim.h: run control and measurement, the contract every workload plugs into.
 *
 * sim/ knows neither SQL nor trace formats nor devices. It offers:
 *   - commands registered by name (appsim <command> ...);
 *   - declarative options: parsing, --help text, and the result's "config" section
 *     come from one table per command, so every parameter is recorded with its default;
 *     peers' names (fio's, sysbench's) as aliases of an option, a refusal for the ones
 *     that mean nothing here, and "did you mean" for a typo;
 *   - the rule for a missing --target directory, and one progress line with an ETA
 *     for every long step;
 *   - a clock, per-thread random numbers and the think-time distribution;
 *   - log-linear latency histograms (1 ns resolution below 2 us, <= 0.1 % relative
 *     error above, up to 2^42 ns = 73 min), mergeable exactly across threads, instances
 *     and result files;
 *   - a run: warm-up and measured phases, per-thread meters (lock-free recording),
 *     interval reports, probes (device counters and the like) sampled at phase
 *     boundaries and per interval;
 *   - the virtual-user engine: many thousands of users as timers on one scheduler
 *     thread, served by a pool of worker threads, each with its own connection;
 *   - the result document (JSON, written atomically) and its text summary.
 *
 * Units: every time inside appsim is in nanoseconds (uint64_t); the result file
 * reports latencies in microseconds (keys ending in _us) as the schema says
 * (docs/result-schema.md).
 *
 * Threading rule for meters and histograms: one writer thread per meter; any thread
 * may read concurrently (counters are relaxed atomics, written without read-modify-
 * write, so recording costs plain loads and stores).
 */
#ifndef APPSIM_SIM_H
#define APPSIM_SIM_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ return codes */

/*
 * Every function of appsim that can fail returns one of two kinds of code, and each
 * folder's public header says which its functions follow:
 *   - an exit status (SIM_EXIT_*): what the process exits with. Commands' mains return
 *     one, and so does every function that knows whether the user must change
 *     something (SIM_EXIT_USAGE) or the run failed (SIM_EXIT_FAIL); callers pass it up
 *     unchanged.
 *   - a status (SIM_OK / SIM_ERR): helpers that only succeed or fail, with the reason
 *     in their err buffer (or already printed); their caller picks the exit status.
 * Test a code against zero (`if (rc)`) or compare it with these names, never with bare
 * numbers. Functions that answer more than success or failure (a record, the end, an
 * error) name their answers in their folder's header (TR_NEXT_*, TR_PARSE_*, ...).
 */
enum {
    SIM_EXIT_OK = 0,    /* success */
    SIM_EXIT_FAIL = 1,  /* the run failed (I/O error, database error, check failed) */
    SIM_EXIT_USAGE = 2, /* bad options or a target that cannot be used */
    SIM_EXIT_NOMEM = 3, /* out of memory (see "memory" below) */
};
enum {
    SIM_OK = 0,   /* success */
    SIM_ERR = -1, /* failure; the reason is in err or was printed */
};
/* The name of an exit status ("ok", "failed", "usage") or of a status ("ok", "error"),
 * for messages and logs; "unknown" for any other number. Each layer names its own
 * codes the same way: storage's -errno with strerror(-rc), the VFS's SQLite codes with
 * sqlite3_errstr, LMDB's with mdb_strerror, sb_status_name, tr_next_name,
 * tr_parse_name. */
const char *sim_exit_name(int status);
const char *sim_status_name(int status);

/* Print "appsim: <message>\n" on stderr. Messages say what was wrong and what to do. */
void sim_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sim_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line on stderr unless --quiet was given to the command. */
void sim_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "appsim: note: <message>" on stderr, --quiet or not: how appsim read what was typed
 * (a peer tool's spelling taken as appsim's own option). */
void sim_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sim_set_quiet(bool quiet);
/* What the running command set with sim_set_quiet (for lines not written by sim_info). */
bool sim_quiet(void);

/* ------------------------------------------------------------------ memory */

/*
 * One allocation policy for the whole program: appsim's own memory comes from these
 * functions, never from malloc, calloc, realloc, strdup, strndup or asprintf directly
 * (tests/integration/alloc_policy.sh fails on any other call, in CI as in
 * scripts/test.sh). They never return NULL, so callers do not check: a command that
 * cannot get memory cannot measure anything, and a check at every call would be an
 * error path no test reaches. Size 0 gives a real (1-byte) block. Out of memory:
 *   - the first time, a reserve held since start-up is given back and the allocation
 *     retried; the shortage becomes the process's fault (sim_fault_noted() == ENOMEM),
 *     so a run in progress stops as after a storage fault (its writes stop; its result
 *     is saved, marked failed with the cause) and `appsim` exits SIM_EXIT_NOMEM;
 *   - when that retry fails too, or cannot help (a request larger than the 16 MiB
 *     reserve, or the reserve spent), the process prints what it could not allocate,
 *     where, and what to do, and exits SIM_EXIT_NOMEM at once. No result is saved
 *     then, since writing one needs memory; an earlier result file is intact (results
 *     are replaced atomically), and a database left behind is as after a crash
 *     (journaled; `check` verifies it). Under mpirun the launcher ends the other ranks.
 * Checked instead, on purpose: allocations whose failure has an answer better than
 * ending the process. Libraries that report failure through their own API keep their
 * checks (jansson's json_* return NULL; sqlite3_mprintf and sqlite3_malloc in the VFS,
 * where SQLite expects SQLITE_NOMEM and rolls back). Raw calls appsim makes itself
 * stay only where the size comes from the user and the caller names the option to
 * lower (posix_memalign for the buffer pool and O_DIRECT buffers, st_alloc_aligned);
 * each carries `appsim-alloc: <reason>` on its line or in the comment just above.
 */
#define sim_xmalloc(n) sim_xmalloc_at((n), __FILE__, __LINE__)
#define sim_xcalloc(count, size) sim_xcalloc_at((count), (size), __FILE__, __LINE__)
#define sim_xrealloc(p, n) sim_xrealloc_at((p), (n), __FILE__, __LINE__)
#define sim_xstrdup(s) sim_xstrdup_at((s), __FILE__, __LINE__)
#define sim_xstrndup(s, max) sim_xstrndup_at((s), (max), __FILE__, __LINE__)
/* A new string printed as by printf. */
#define sim_xasprintf(...) sim_xasprintf_at(__FILE__, __LINE__, __VA_ARGS__)
#define sim_xvasprintf(fmt, ap) sim_xvasprintf_at(__FILE__, __LINE__, (fmt), (ap))
void *sim_xmalloc_at(size_t n, const char *file, int line)
    __attribute__((malloc, returns_nonnull, alloc_size(1)));
void *sim_xcalloc_at(size_t count, size_t size, const char *file, int line)
    __attribute__((malloc, returns_nonnull, alloc_size(1, 2)));
void *sim_xrealloc_at(void *p, size_t n, const char *file, int line)
    __attribute__((returns_nonnull, alloc_size(2)));
char *sim_xstrdup_at(const char *s, const char *file, int line)
    __attribute__((malloc, returns_nonnull));
char *sim_xstrndup_at(const char *s, size_t max, const char *file, int line)
    __attribute__((malloc, returns_nonnull));
char *sim_xasprintf_at(const char *file, int line, const char *fmt, ...)
    __attribute__((malloc, returns_nonnull, format(printf, 3, 4)));
char *sim_xvasprintf_at(const char *file, int line, const char *fmt, va_list ap)
    __attribute__((malloc, returns_nonnull, format(printf, 3, 0)));
/* Whether the reserve is still held (false once a shortage used it); for tests. */
bool sim_alloc_reserve_held(void);

/* ------------------------------------------------------------------ registries */

/*
 * Things registered by name (commands, database and I/O engines, trace formats and
 * subcommands): added from constructors before main, on one thread; kept sorted by
 * name; items[0..n) then NULL. More than `cap` entries, or two with one name, stops the
 * program at start-up with a message. Declare one with SIM_REGISTRY.
 */
typedef struct sim_registry {
    const char *what;   /* "commands", for messages */
    size_t name_offset; /* offsetof(entry type, its const char *name) */
    int cap, n;
    const void **items; /* cap + 1 slots */
} sim_registry;
#define SIM_REGISTRY(var, type, what_, cap_)                                                       \
    static const void *var##_items[(cap_) + 1];                                                    \
    static sim_registry var = {                                                                    \
        .what = (what_), .name_offset = offsetof(type, name), .cap = (cap_), .items = var##_items}
void sim_registry_add(sim_registry *r, const void *item);
const void *sim_registry_find(const sim_registry *r, const char *name);
/* "a|b|c" into buf (truncated to len). */
const char *sim_registry_names(sim_registry *r, char *buf, size_t len);

/* ------------------------------------------------------------------ commands */

typedef struct sim_command {
    const char *name;    /* "tpcc", "sysbench", "replay", ... */
    const char *summary; /* one line for `appsim --help` */
    /* argv[0] is the command name; returns an exit status (SIM_EXIT_*). */
    int (*main)(int argc, char **argv);
    /* The words its first argument may be (actions such as "run", subcommands such
     * as "info"), NULL-terminated; NULL when it takes none. For the man page and the
     * shell completion. */
    const char *const *(*actions)(void);
} sim_command;

void sim_register_command(const sim_command *cmd);
/* Runs one invocation of cmd (appsim's main, and suite for each step): state that
 * belongs to an invocation (the --quiet of sim_info, stdout claimed by --json -) starts
 * fresh and is put back afterwards, so that a second invocation in the same process
 * starts from its own options. Returns the exit status appsim gives it: 1 after a
 * storage fault (sim_fault_noted), else 128 + the signal after SIGINT or SIGTERM, else
 * cmd's own. */
int sim_command_run(const sim_command *cmd, int argc, char **argv);
const sim_command *sim_find_command(const char *name);
/* Commands in registration-independent (alphabetical) order; NULL-terminated. */
const sim_command *const *sim_commands(void);

/* Registers a command when the program starts (the object must be linked whole). */
#define SIM_REGISTER_COMMAND(var)                                                                  \
    __attribute__((constructor)) static void sim_register_##var(void)                              \
    {                                                                                              \
        sim_register_command(&(var));                                                              \
    }

/* ------------------------------------------------------------------ options */

typedef enum sim_opt_kind {
    SIM_OPT_FLAG,     /* bool *dst; no argument */
    SIM_OPT_U64,      /* uint64_t *dst; decimal integer, range [min,max] */
    SIM_OPT_DOUBLE,   /* double *dst; range [min,max] */
    SIM_OPT_SIZE,     /* uint64_t *dst; bytes, suffixes k M G T (binary), e.g. 24G */
    SIM_OPT_DURATION, /* uint64_t *dst; ns, units ms s m h (bare number = seconds) */
    SIM_OPT_STRING,   /* const char **dst */
    SIM_OPT_CHOICE,   /* const char **dst; one of `choices` ("a|b|c") */
    SIM_OPT_WARMUP,   /* uint64_t *dst; a duration, or "steady" = SIM_WARMUP_STEADY */
} sim_opt_kind;

/* The value of a SIM_OPT_WARMUP option given as "steady" (sim_run_config_warmup). */
#define SIM_WARMUP_STEADY UINT64_MAX

/* What an option names when it names a file the command writes (sim_opt.output). */
typedef enum sim_output_kind {
    SIM_OUTPUT_NONE = 0,
    SIM_OUTPUT_REPLACE, /* a file written whole, replacing one that exists */
    SIM_OUTPUT_NEW,     /* an existing file is replaced only with the command's --force */
} sim_output_kind;

typedef struct sim_opt {
    const char *name; /* long option without "--" */
    sim_opt_kind kind;
    void *dst; /* holds the default before parsing */
    const char *help;
    const char *choices; /* SIM_OPT_CHOICE only */
    double min, max;     /* numeric kinds; max == 0 means no upper bound */
    bool set;            /* out: given on the command line */
    /* out: the argument that gave it ("--runtime=30"): an option given under two of
     * its names is refused, as two options that say the same thing would be. */
    const char *given_as;
    /* Other names for the same option, "|"-separated, listed in the help; the result
     * records the option under `name`. "NAME": appsim's own synonym, accepted silently.
     * "PEER:NAME" ("fio:runtime"): the name a peer tool gives it, accepted with one
     * note on stderr naming appsim's spelling. For a flag, "PEER:NAME=V" ("fio:direct=0"):
     * the peer's form takes 0 or 1 (--direct=1, --direct=0; bare = 1), V sets the flag
     * and the other value leaves it off. sim_alias_next reads one entry. */
    const char *aliases;
    /* Old spellings, "|"-separated: still accepted (users' scripts keep working), each
     * use noted in one line on stderr naming the new spelling; not in the help. */
    const char *deprecated;
    /* The value's placeholder in the help ("FILE", "PATH"); NULL = from the kind. */
    const char *metavar;
    /* The value taken when the option is given without one (last, or followed by
     * another option): an old flag form of a value option (vdi's `--json` meant
     * `--json -`), noted on stderr. NULL = a value is required. */
    const char *bare_value;
    /* SIM_OPT_STRING naming a file the command writes ("-" = stdout): sim_opts_parse
     * checks it with sim_output_check before the command creates or runs anything. */
    sim_output_kind output;
    /* SIM_OPT_STRING: values the shell completion offers, "|"-separated (io's built-in
     * profiles); the option still takes any string (a comma-separated list of them). */
    const char *suggestions;
} sim_opt;
/* One entry of sim_opt.aliases. */
typedef struct sim_alias {
    const char *name, *peer;   /* not terminated: name_len and peer_len bytes */
    size_t name_len, peer_len; /* peer_len 0: appsim's own synonym */
    int flag_value;            /* "=V" of a flag's peer form (0 or 1); -1 when none */
} sim_alias;
/* Reads the entry at p (an option's aliases, or what the previous call returned) into
 * *a; returns where the next entry starts, or NULL (and *a untouched) when none is left. */
const char *sim_alias_next(const char *p, sim_alias *a);

/* Terminates an option table. */
#define SIM_OPT_END                                                                                \
    {                                                                                              \
        0                                                                                          \
    }

/*
 * Parse argv[1..] against opts (terminated by SIM_OPT_END). Non-option arguments are
 * collected in order into positional[0..*npositional) (at most max_positional; more is
 * a usage error). "--help" prints sim_opts_help and returns SIM_OPTS_HELP_SHOWN (the
 * caller exits 0: sim_opts_exit_status). Returns SIM_EXIT_OK, SIM_OPTS_HELP_SHOWN or
 * SIM_EXIT_USAGE after printing a message that names the option, the bad value and
 * what is accepted. Every output option given (sim_opt.output) is checked last
 * (sim_output_check), so a command refuses an unusable output before anything else.
 */
#define SIM_OPTS_HELP_SHOWN (-1)
/* The exit status for a non-zero sim_opts_parse result: help shown is a success. */
static inline int sim_opts_exit_status(int rc)
{
    return rc == SIM_OPTS_HELP_SHOWN ? SIM_EXIT_OK : rc;
}
int sim_opts_parse(const char *command, sim_opt *opts, int argc, char **argv, char **positional,
                   int max_positional, int *npositional, const char *usage);
void sim_opts_help(FILE *out, const char *command, const char *usage, const sim_opt *opts);

/*
 * Output files, checked before a command creates or runs anything (sim/output_check.c),
 * so that a run never ends with its result lost or a refusal that leaves something
 * behind. A path is refused (message naming the option, the path and what to do;
 * SIM_EXIT_USAGE) when its directory is missing or not a directory, when it names a
 * directory or something other than a regular file (a device, a FIFO, a socket),
 * when it lies on a kernel pseudo-filesystem (/proc, /sys, ...) or a read-only one, when
 * a file cannot be created in its directory (tried with a probe file, removed at once:
 * the only way that holds for root, ACLs and quotas alike), when a SIM_OUTPUT_NEW file
 * exists without --force, when two output options name one file or one names a file the
 * command reads (one of inputs[0..ninputs), its positional arguments), or when the
 * output guard refuses it. "-" (stdout) is always accepted. Only rank 0 of a job writes
 * results, so other ranks skip the check.
 */
int sim_output_check(const char *command, const sim_opt *opts, char *const *inputs, int ninputs);
/* The same for one path that is not an option's value (a positional output); `what`
 * names it in the message ("the output file"). opts may be NULL. */
int sim_output_check_path(const char *command, const char *what, const char *path,
                          sim_output_kind kind, bool force, const sim_opt *opts);
/* The output guard: storage refuses paths that are a target's own files (the target
 * being the command's --target, found in opts). Returns true and why when path must not
 * be written. Set once, from a constructor. */
typedef bool (*sim_output_guard_fn)(const sim_opt *opts, const char *path, char *why, size_t len);
void sim_set_output_guard(sim_output_guard_fn fn);
/* {"name": value, ...} for every option, defaults included (sizes in bytes, durations
 * in seconds as numbers). */
json_t *sim_opts_to_json(const sim_opt *opts);
const sim_opt *sim_opts_find(const sim_opt *opts, const char *name);
/* Builds a command's option table in pieces (one per group of options, in help order):
 * copies the `count` options of part to opts[*at..] (opts holds n) and advances *at.
 * The last piece ends with SIM_OPT_END. SIM_OPTS_APPEND takes the count from an array. */
void sim_opts_append(sim_opt *opts, size_t n, size_t *at, const sim_opt *part, size_t count);
#define SIM_OPTS_APPEND(opts, n, at, part)                                                         \
    sim_opts_append((opts), (n), (at), (part), sizeof(part) / sizeof *(part))
/* The default as the help shows it ("" when there is none); valid before parsing. */
void sim_opt_default_text(const sim_opt *o, char *buf, size_t len);
/* The value's placeholder in the help ("N", "SIZE", "a|b|c"); "" for a flag. */
const char *sim_opt_value_hint(const sim_opt *o);
/* While a describer is set, sim_opts_parse parses nothing: it hands the command's
 * table (with its defaults) and usage text to the describer and returns
 * SIM_OPTS_HELP_SHOWN, as after --help. `appsim --man` and `--completion` walk every
 * command's table this way. */
typedef void (*sim_opts_describer)(void *ctx, const char *command, const char *usage,
                                   const sim_opt *opts);
void sim_opts_set_describer(sim_opts_describer fn, void *ctx);
/* While on, sim_opts_parse parses and checks a command line fully (every option and
 * value, as a run would) but the command runs nothing: a line that parses returns
 * SIM_OPTS_HELP_SHOWN, as after --help, without the output check (an output's directory
 * may not exist yet). suite checks each step's command line this way before it runs
 * any step, --dry-run included. */
void sim_opts_set_check_only(bool on);

/*
 * The shared vocabulary: every command spells these concepts the same way, with the
 * same placeholder, meaning and default (tests/integration/vocabulary.sh walks
 * every command's --help and fails on a concept spelled two ways). The target, its
 * --allow-destroy, --buffered and --ioengine are storage's (ST_TARGET_OPTIONS,
 * ST_OPT_IOENGINE in storage/storage.h). Instances are numbered from 1 everywhere, in
 * the text and in the result.
 */
/* --target into the const char * at dst_: the drive under test, declared here once for
 * every command. metavar_ is "PATH" (a directory or a block device) or "DIR" (a
 * directory only); what_ is the help text. A missing directory is created by every
 * command that writes to it (storage's st_target_open, docs/storage.md). */
#define SIM_VOCAB_TARGET(dst_, metavar_, what_)                                                    \
    {                                                                                              \
        .name = "target", .kind = SIM_OPT_STRING, .dst = (dst_), .metavar = (metavar_),            \
        .help = (what_)                                                                            \
    }
/* The rule for a --target that does not exist, for every command that writes to it:
 * SIM_OK when it may be created as a directory (its parent is a directory, and it is
 * not under /dev, where a missing path is a device that is not there); otherwise
 * SIM_ERR and why (with what to do) in why. storage's st_target_open applies it. */
int sim_target_creatable(const char *path, char *why, size_t whylen);
/* The --report-interval default of every command (interval lines on stderr, and the
 * series in the result that the report charts over time). */
#define SIM_REPORT_INTERVAL_DEFAULT_NS (5ull * 1000000000ull)
/* Its least value other than 0 (sim_opts_parse refuses less): a shorter interval prints
 * thousands of lines a second and fills the result with intervals too short to hold a
 * percentile. */
#define SIM_REPORT_INTERVAL_MIN_NS (10ull * 1000000ull)
/* --duration TIME (sysbench's --time accepted), at least min_s seconds; `what`
 * completes "length of the measured phase". */
#define SIM_VOCAB_DURATION(dst_, min_s, what) SIM_VOCAB_DURATION_PEERS(dst_, min_s, what, "")
/* The same with peers' names too: peers_ is "" or "|fio:runtime" (sim_opt.aliases). */
#define SIM_VOCAB_DURATION_PEERS(dst_, min_s, what, peers_)                                        \
    {                                                                                              \
        .name = "duration", .kind = SIM_OPT_DURATION, .dst = (dst_), .min = (min_s),               \
        .aliases = "time" peers_, .help = "length of the measured phase" what                      \
    }
/* --warmup TIME|steady; `what` says what is warmed up and what "steady" waits for. */
#define SIM_VOCAB_WARMUP(dst_, what) SIM_VOCAB_WARMUP_PEERS(dst_, what, NULL)
/* The same with peers' names (sim_opt.aliases: "fio:ramp_time"), or NULL. */
#define SIM_VOCAB_WARMUP_PEERS(dst_, what, peers_)                                                 \
    {                                                                                              \
        .name = "warmup", .kind = SIM_OPT_WARMUP, .dst = (dst_), .aliases = (peers_),              \
        .help = "warm-up, excluded from the summary" what                                          \
    }
#define SIM_VOCAB_REPORT_INTERVAL(dst_)                                                            \
    {                                                                                              \
        .name = "report-interval", .kind = SIM_OPT_DURATION, .dst = (dst_),                        \
        .help = "interval lines on stderr and the series in the result (0 = none; else at "        \
                "least 10ms)"                                                                      \
    }
/* --json FILE; "-" = the document on stdout and nothing else there (sim_result_save). */
#define SIM_VOCAB_JSON(dst_, deprecated_)                                                          \
    {                                                                                              \
        .name = "json", .kind = SIM_OPT_STRING, .dst = (dst_), .metavar = "FILE",                  \
        .deprecated = (deprecated_), .output = SIM_OUTPUT_REPLACE,                                 \
        .help = "write the result document to FILE (- = stdout, and nothing else there)"           \
    }
#define SIM_VOCAB_QUIET(dst_, what)                                                                \
    {                                                                                              \
        .name = "quiet", .kind = SIM_OPT_FLAG, .dst = (dst_), .help = what                         \
    }
#define SIM_VOCAB_SEED(dst_, what)                                                                 \
    {                                                                                              \
        .name = "seed", .kind = SIM_OPT_U64, .dst = (dst_), .help = "random seed (" what ")"       \
    }
/* --cpu-sched batch|normal (const char *): the scheduling policy of the threads that run
 * transactions (sim_thread_set_cpu_sched). */
#define SIM_VOCAB_CPU_SCHED(dst_)                                                                  \
    {                                                                                              \
        .name = "cpu-sched", .kind = SIM_OPT_CHOICE, .dst = (dst_), .choices = "batch|normal",     \
        .help = "the connections' threads: batch (SCHED_BATCH: a thread that wakes does not "      \
                "preempt a running one, e.g. the writer lock's holder) or normal (docs/sim.md, "   \
                "Worker scheduling)"                                                               \
    }
/* --curve-points in percent of the maximum rate (tr_curve_parse_points reads it). */
#define SIM_VOCAB_CURVE_POINTS(dst_, deprecated_)                                                  \
    {                                                                                              \
        .name = "curve-points", .kind = SIM_OPT_STRING, .dst = (dst_), .metavar = "PCT,...",       \
        .deprecated = (deprecated_),                                                               \
        .help = "rate curve points in percent of the maximum rate (default: "                      \
                "10,20,...,100,110,120)"                                                           \
    }

/* The edit distance (insertions, deletions, substitutions; Levenshtein) between a and
 * b, for "did you mean". Bytes, not characters; names are ASCII. */
size_t sim_edit_distance(const char *a, const char *b);
/* Of the n candidates, the one closest to typed when it is close enough to be a typo
 * (at most 1 edit for names of up to 4 characters, 2 up to 8, else 3; a unique prefix
 * of at least 3 characters also counts), else NULL. */
const char *sim_suggest(const char *typed, const char *const *candidates, size_t n);
/* "unknown <what> '<typed>'; did you mean '<word>'? <see>" (the "did you mean" only
 * when one of the NULL-terminated words is near); returns SIM_EXIT_USAGE. */
int sim_refuse_unknown(const char *what, const char *typed, const char *const *words,
                       const char *see);

/* Why `command` has no use for a peer tool's option `name` (fio's --time_based, sysbench's
 * --mysql-host) and what to do instead; NULL when name is no such option (sim/peers.c). */
const char *sim_peer_refusal(const char *command, const char *name);

/* Single-value parsers used by the table parser, public for workloads with
 * structured arguments (e.g. --region OFFSET:LENGTH). Numbers are decimal in all of
 * them (hexadecimal is refused everywhere). SIM_OK or SIM_ERR. */
int sim_parse_size(const char *s, uint64_t *bytes);
int sim_parse_duration(const char *s, uint64_t *ns);
int sim_parse_u64(const char *s, uint64_t *v);
int sim_parse_double(const char *s, double *v);
/* The shortest of %.15g, %.16g and %.17g that reads back (strtod) as exactly v:
 * 2237.6, not 2237.5999999999999, and still every bit of v. Into buf (32 bytes hold any). */
const char *sim_format_double(double v, char *buf, size_t len);
/* "24 GiB", "512 KiB" into buf. */
const char *sim_format_size(uint64_t bytes, char *buf, size_t len);

/* ------------------------------------------------------------------ clock */

uint64_t sim_now_ns(void); /* CLOCK_MONOTONIC */
/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID; 0 where it fails). */
uint64_t sim_thread_cpu_ns(void);
/* Moves the calling thread to CPU scheduling policy "batch" (SCHED_BATCH: its wake-ups
 * do not preempt the running thread) or "normal" (SCHED_OTHER); SIM_OK, or SIM_ERR with
 * err saying what to do (docs/sim.md, "Worker scheduling"). */
int sim_thread_set_cpu_sched(const char *policy, char *err, size_t errlen);
/* Sleep until the monotonic clock reaches t (returns early on a signal). */
void sim_sleep_until_ns(uint64_t t);

/* ------------------------------------------------------------------ progress */

/*
 * The progress line of a long step (sim/progress.c): "WHAT: DETAIL (P%), ETA T" on
 * stderr, the ETA from the rate so far. On a terminal the line is rewritten once a
 * second; otherwise a full line every 10 s. Nothing when quiet.
 *
 *   sim_progress p;
 *   sim_progress_start(&p, "tpcc: loading", total, quiet);
 *   ... if (sim_progress_due(&p, now)) sim_progress_line(&p, now, done, detail, false);
 */
typedef struct sim_progress {
    const char *what;
    uint64_t total;    /* units of the whole step (bytes, warehouses, rows, ns) */
    uint64_t t0, next; /* start, and when the next line is due (sim_now_ns) */
    bool tty, quiet;
} sim_progress;
void sim_progress_start(sim_progress *p, const char *what, uint64_t total, bool quiet);
/* True (and the next one planned) when a line is due at now. */
bool sim_progress_due(sim_progress *p, uint64_t now);
/* The line for `done` of total units; detail is the caller's figures ("3 of 10
 * warehouses, 5200 rows/s"). last: the line is ended even on a terminal. */
void sim_progress_line(sim_progress *p, uint64_t now, uint64_t done, const char *detail, bool last);
/* Clears the terminal line before other output (nothing in a log). */
void sim_progress_clear(const sim_progress *p);
/* "42 s", "3 min 5 s", "2 h 10 min". */
const char *sim_format_eta(double seconds, char *buf, size_t len);

/* ------------------------------------------------------------------ random numbers */

/* xoshiro256**: fast, 2^256 period; one per thread or per virtual user. */
typedef struct sim_rng {
    uint64_t s[4];
} sim_rng;

void sim_rng_seed(sim_rng *rng, uint64_t seed, uint64_t stream);
uint64_t sim_rng_u64(sim_rng *rng);
double sim_rng_double(sim_rng *rng);                            /* [0, 1) */
uint64_t sim_rng_range(sim_rng *rng, uint64_t lo, uint64_t hi); /* [lo, hi], unbiased */
/* Negative exponential with the given mean, truncated at 10 x mean (TPC-C 5.2.5.4). */
uint64_t sim_rng_think_ns(sim_rng *rng, uint64_t mean_ns);
/* Untruncated exponential inter-arrival time for a Poisson process of `rate` per s. */
uint64_t sim_rng_exp_ns(sim_rng *rng, double rate_per_s);

/* ------------------------------------------------------------------ histograms */

typedef struct sim_hist sim_hist;

sim_hist *sim_hist_new(void);
void sim_hist_free(sim_hist *h);
void sim_hist_reset(sim_hist *h); /* not safe against a concurrent writer */
/* O(1); single writer. Values above the top (2^42 ns) are clamped and counted in
 * sim_hist_clamped(). */
void sim_hist_record(sim_hist *h, uint64_t ns);
void sim_hist_record_n(sim_hist *h, uint64_t ns, uint64_t n);
void sim_hist_merge(sim_hist *dst, const sim_hist *src);
/* dst += a - b (bucket-wise); used for interval deltas of cumulative histograms. */
void sim_hist_add_delta(sim_hist *dst, const sim_hist *a, const sim_hist *b);
uint64_t sim_hist_count(const sim_hist *h);
uint64_t sim_hist_clamped(const sim_hist *h);
uint64_t sim_hist_min(const sim_hist *h); /* exact */
uint64_t sim_hist_max(const sim_hist *h); /* exact */
double sim_hist_mean(const sim_hist *h);  /* exact: kept as a running sum */
double sim_hist_stddev(const sim_hist *h);
/* Value at percentile p (0..100]: the representative value of the bucket holding
 * the ceil(p/100 * count)-th smallest sample. 0 when empty. */
uint64_t sim_hist_percentile(const sim_hist *h, double p);
/* Serialized form for the result file: {"layout":..., "count":..., "sum_ns":...,
 * "min_ns":..., "max_ns":..., "clamped":..., "sparse":"gap[:count],..."} (only the
 * non-empty buckets, docs/result-schema.md); exact round trip. Reading also accepts
 * the older "buckets":[[index,count],...] form. */
json_t *sim_hist_to_json(const sim_hist *h);
/* Returns NULL and fills err on malformed input or an incompatible layout. */
sim_hist *sim_hist_from_json(const json_t *j, char *err, size_t errlen);
/* Calls fn for every non-empty bucket in index order. The layout (docs/result-schema.md)
 * is HdrHistogram's for a lowest discernible value of 1 and 3 significant digits, so
 * the index is also HdrHistogram's counts index. */
void sim_hist_foreach(const sim_hist *h, void (*fn)(uint32_t index, uint64_t count, void *arg),
                      void *arg);
/* {"count","mean_us","stddev_us","min_us","p50_us","p90_us","p95_us","p99_us",
 *  "p999_us","p9999_us","max_us"} */
json_t *sim_hist_summary_json(const sim_hist *h);

/* ------------------------------------------------------------------ runs */

typedef enum sim_phase {
    SIM_PHASE_IDLE,    /* before sim_run_start */
    SIM_PHASE_WARMUP,  /* samples kept apart, never in the summary */
    SIM_PHASE_MEASURE, /* the summary */
    SIM_PHASE_DONE,    /* duration reached, interrupted, or sim_run_finish called */
} sim_phase;

/* Default bound on the stored interval series: 4096 points, 5.7 hours at 5 s. */
#define SIM_SERIES_MAX_POINTS 4096u

typedef struct sim_run_config {
    const char *const *type_names; /* operation / transaction types, ntypes >= 1 */
    int ntypes;
    const char *const *counter_names; /* extra per-run counters (retries, bytes...) */
    int ncounters;
    const char *unit;            /* "tps" for transactions, "iops" for I/Os */
    uint64_t warmup_ns;          /* 0 = no warm-up */
    uint64_t duration_ns;        /* measured phase; 0 = until sim_run_finish */
    uint64_t report_interval_ns; /* 0 = no interval lines or series */
    /* Most points the stored series holds (0 = SIM_SERIES_MAX_POINTS). A point covers
     * `stride` report intervals: 1 while the planned run fits, more when it does not
     * (chosen at the start), and doubled whenever a run outlasts its plan, so memory
     * over hours stays bounded while every point is still exact (a delta of the
     * cumulative histograms and probes). Interval lines on stderr stay at every
     * report interval. */
    unsigned series_max_points;
    int instances; /* >= 1; per-instance figures when > 1 */
    bool quiet;    /* no interval lines on stderr (series still kept) */
    /* Steady-state warm-up (--warmup steady) when steady_round_ns > 0; warmup_ns is
     * then ignored. The warm-up runs in rounds of steady_round_ns, tracking the rate
     * (unit per second) of each; the measured phase starts at the end of the first
     * round after which the rule (SIM_STEADY_RULE_PTS) holds, or after
     * steady_max_rounds rounds, when the result says steady state was not reached. */
    uint64_t steady_round_ns;
    unsigned steady_max_rounds;
    /* The measured phase ends after this many operations (sysbench's --events), or at
     * duration_ns if that comes first; 0 = no limit. */
    uint64_t max_units;
} sim_run_config;

/* Sets warmup_ns or, when warmup == SIM_WARMUP_STEADY, the steady-state fields. */
void sim_run_config_warmup(sim_run_config *cfg, uint64_t warmup, uint64_t round_ns,
                           uint64_t max_rounds);

typedef struct sim_run sim_run;
typedef struct sim_meter sim_meter;

/* A probe is something outside sim/ sampled at the start and end of the measured
 * phase and at every interval: e.g. storage's block-device counters. */
typedef struct sim_probe_ops {
    const char *name; /* key in the result ("device_io") and in each interval */
    /* Take a snapshot; returns an opaque snapshot or NULL on failure. */
    void *(*snapshot)(void *ctx);
    /* Describe what happened between two snapshots over `seconds`, during which
     * `units` transactions (or I/Os) completed; units may be 0. */
    json_t *(*delta)(void *ctx, const void *from, const void *to, double seconds, uint64_t units);
    void (*free_snapshot)(void *ctx, void *snapshot);
    /* Optional, for a job of several ranks (docs/mpi.md): called on rank 0 with every
     * rank's delta of one window (sections[i]: rank i's, or NULL) and the ranks' host
     * names, to correct them for what ranks share (a disk, say). NULL: none. */
    void (*ranks_adjust)(json_t *const *sections, const char *const *hosts, size_t n);
} sim_probe_ops;

sim_run *sim_run_new(const sim_run_config *cfg);
void sim_run_free(sim_run *run);
/* A meter for one thread's recordings in `instance` (0-based). Thread-safe. The run
 * owns it. Create meters before or after sim_run_start. */
sim_meter *sim_run_meter(sim_run *run, int instance);
void sim_run_add_probe(sim_run *run, const sim_probe_ops *ops, void *ctx);
/* The harness's own lateness: how late the virtual-user scheduler released users
 * against their due times (sim_vu_run records each release).
 * Latencies count it, since they run from the due time, so a run whose timers were late
 * was slowed by the machine (its cores, or a stalled virtual machine), not by the
 * drive. A workload whose users wait on timers asks for it before sim_run_start; the
 * result then has "harness" (timer_wakes, late_p50_us, late_p99_us, late_max_us) over
 * the measured phase and in each interval. */
void sim_run_track_lateness(sim_run *run);
/* One release `late_ns` after its due time, as the VU scheduler records them. One
 * writer; nothing when the run does not track lateness. */
void sim_run_note_late(sim_run *run, uint64_t late_ns);
/* Starts the clock (warm-up first, if any) and the interval reporter thread. */
void sim_run_start(sim_run *run);
sim_phase sim_run_phase(const sim_run *run); /* cheap; also turns DONE on SIGINT/TERM */
static inline bool sim_run_done(const sim_run *run)
{
    return sim_run_phase(run) == SIM_PHASE_DONE;
}
/* Ends the run now (for runs without a duration, or on error); idempotent. Takes
 * the final probe snapshots and stops the reporter. */
void sim_run_finish(sim_run *run);
bool sim_run_interrupted(const sim_run *run);
/* A guard is called by the run's reporter thread once a second while the run lasts
 * (warm-up included). When it returns true, with the reason written to why, the run
 * stops as on Ctrl-C: the measured phase closes then, the figures cover the time
 * until that moment, and the result carries the reason ("stopped_by"). */
typedef bool (*sim_guard_fn)(void *ctx, char *why, size_t whylen);
void sim_run_add_guard(sim_run *run, sim_guard_fn fn, void *ctx);
/* The reason a guard or a storage fault stopped the run, or NULL. */
const char *sim_run_stopped_by(const sim_run *run);
/* A storage fault (sim_fault_note) stopped the run: its result is marked failed. */
bool sim_run_failed(const sim_run *run);
/* Measured seconds (warm-up excluded); valid after sim_run_finish. */
double sim_run_measured_seconds(const sim_run *run);
const sim_run_config *sim_run_cfg(const sim_run *run);

/*
 * Record one completed operation of `type`. Latency = end_ns - intended_ns, where
 * intended_ns is when the user (or the trace) wanted it to start, so that queueing
 * counts. The sample goes to the warm-up or measured phase by its end time; samples
 * ending after the measured phase are dropped.
 */
void sim_meter_record(sim_meter *m, int type, uint64_t intended_ns, uint64_t end_ns);
/*
 * The same for an open-loop generator (a fixed rate, a trace's timestamps): the
 * operation (and its counts) goes to the phase in which it was wanted (intended_ns),
 * whenever it ended, and is dropped only when it was wanted after the measured phase.
 * So a measured phase holds exactly the arrivals of its interval that were served: a
 * backlog left by the warm-up does not count as measured throughput, and operations
 * still queued when the phase ends count with their whole latency when they end
 * before the run is finished.
 */
void sim_meter_record_arrival(sim_meter *m, int type, uint64_t intended_ns, uint64_t end_ns);
/* A failed operation (counted as an error of `type`, not in latency), ending now. */
void sim_meter_error(sim_meter *m, int type);
/* Add n to counter `counter` (index into cfg->counter_names) for the operation in
 * progress: the counts wait on the meter and join the phase of the operation this
 * meter records next (sim_meter_record or sim_meter_error), so they count only when it
 * is measured. An operation and its counts therefore always fall on the same side of
 * a phase boundary. Count before recording the operation they belong to. */
void sim_meter_count(sim_meter *m, int counter, uint64_t n);
/* For work that is not recorded as an operation of the meter (tpcc's deferred
 * deliveries): its waiting counts go to the phase of at_ns. True when at_ns is in the
 * measured phase, so the caller can keep its own figures of that work in step. */
bool sim_meter_settle(sim_meter *m, uint64_t at_ns);

/* Merged measured histogram of one type (or of all types when type < 0), over all
 * instances (instance < 0) or one. Caller frees. Valid after sim_run_finish. */
sim_hist *sim_run_merged_hist(const sim_run *run, int type, int instance);
uint64_t sim_run_count(const sim_run *run, int type, int instance); /* type<0: all */
uint64_t sim_run_errors(const sim_run *run, int type, int instance);
uint64_t sim_run_counter(const sim_run *run, int counter, int instance);

/* Start of the measured phase and its end (UINT64_MAX while not known: a steady-state
 * warm-up that has not settled, or an open-ended run). Changes at most once, when a
 * steady-state warm-up ends; cheap enough for every operation. */
uint64_t sim_run_measure_start_ns(const sim_run *run);
uint64_t sim_run_measure_end_ns(const sim_run *run);

/* ------------------------------------------------------------------ steady state */

/* The SNIA PTS steady-state rule: over the last `window` rounds, max - min <=
 * max_range x mean and the least-squares line changes by <= max_slope x mean across
 * the window. */
typedef struct sim_steady_rule {
    int window;
    double max_range;
    double max_slope;
} sim_steady_rule;
#define SIM_STEADY_RULE_PTS ((sim_steady_rule){.window = 5, .max_range = 0.20, .max_slope = 0.10})

typedef struct sim_steady_eval {
    bool judged;         /* there were at least `window` rounds */
    bool steady;         /* the rule holds (never for a mean of 0: stalled) */
    double mean;         /* of the window's rates */
    double range;        /* max - min */
    double slope_change; /* |least-squares slope| x (window - 1) */
} sim_steady_eval;

/* Judges the last rule->window of rates[0..n). Pure. */
sim_steady_eval sim_steady_judge(const double *rates, size_t n, const sim_steady_rule *rule);

/* The options every workload with --warmup steady adds to its table: round length
 * (uint64_t ns, default 1 min) and the most rounds (uint64_t, default 25). */
#define SIM_STEADY_OPTS(round_ns_dst, max_rounds_dst)                                              \
    {.name = "steady-round",                                                                       \
     .kind = SIM_OPT_DURATION,                                                                     \
     .dst = (round_ns_dst),                                                                        \
     .help = "--warmup steady: length of one round",                                               \
     .min = 0.1},                                                                                  \
    {                                                                                              \
        .name = "steady-max-rounds", .kind = SIM_OPT_U64, .dst = (max_rounds_dst),                 \
        .help = "--warmup steady: give up after this many rounds (then measure anyway)", .min = 5, \
        .max = 1000000                                                                             \
    }
#define SIM_STEADY_DEFAULT_ROUND_NS (60ull * 1000000000ull)
#define SIM_STEADY_DEFAULT_MAX_ROUNDS 25
/* "30 s" or "steady-state" for messages, into buf. */
const char *sim_warmup_text(uint64_t warmup, char *buf, size_t len);
/* Usage error (message printed, SIM_EXIT_USAGE) when steady-round or
 * steady-max-rounds was given without "--warmup steady"; else 0. */
int sim_steady_opts_check(const char *command, const sim_opt *opts, uint64_t warmup);

/* ------------------------------------------------------------------ virtual users */

/*
 * The engine runs `vusers` virtual users per instance on `workers` worker threads per
 * instance. Closed loop (rate == 0): a user runs a unit of work, waits next_delay_ns
 * (its think/keying time), runs again; users whose delay is 0 go straight back to the
 * queue. Open loop (rate > 0): units arrive as a Poisson process of `rate` per second
 * per instance, whatever the completions (in a measured phase of known ends, exactly
 * round(rate x seconds) of them, placed as such a process places that many: see
 * next_arrival in vu.c), or evenly spaced (`uniform`); users are then only a partition of the
 * work (arrival k goes to user k % vusers) and the worker's rng is passed.
 * In both, the latency recorded is from the intended start (due time or arrival) to
 * the end of the unit, so waiting for a free worker (connection) counts. An open-loop
 * unit counts in the phase it arrived in (sim_meter_record_arrival), a closed-loop one
 * in the phase it ended in.
 */
typedef struct sim_vu_ops {
    /* Open worker `worker` of `instance` (e.g. a database connection); NULL = fail. */
    void *(*worker_open)(void *wl, int instance, int worker);
    void (*worker_close)(void *wl, void *conn);
    /* Run one unit for user `vu` (0-based within the instance). Returns its type
     * (>= 0) on success, or -(type + 1) if it failed. The engine records it. */
    int (*run)(void *wl, void *conn, int instance, uint32_t vu, sim_rng *rng, sim_meter *m);
    /* Closed loop: delay before the user's next unit, given the type it just ran
     * (or -1 before its first unit). NULL = no delay. */
    uint64_t (*next_delay_ns)(void *wl, int instance, uint32_t vu, int last_type, sim_rng *rng);
} sim_vu_ops;

typedef struct sim_vu_config {
    int instances;
    uint32_t vusers; /* per instance */
    int workers;     /* per instance */
    double rate;     /* per instance per second; 0 = closed loop */
    uint64_t seed;
    bool uniform; /* open loop: arrivals evenly spaced (1 / rate) instead of exponential */
} sim_vu_config;

typedef struct sim_vu_stats {
    uint64_t units;            /* units run */
    uint64_t max_queue;        /* largest backlog of due users waiting for a worker */
    uint64_t wake_late_p50_ns; /* scheduler lateness against due times */
    uint64_t wake_late_p99_ns;
    uint64_t wake_late_max_ns;
    /* Open loop: arrivals due inside the measured phase, and the units released but not
     * yet started (all instances) when the measured phase began and when it ended; a
     * backlog that grew means the arrivals outran the workers. */
    uint64_t arrivals_measured;
    uint64_t backlog_at_start, backlog_at_end;
} sim_vu_stats;

/* Runs until the run is done. `run` must be started by the caller (so that it can
 * prepare in between); returns SIM_EXIT_OK or SIM_EXIT_FAIL (a worker failed to open). */
int sim_vu_run(sim_run *run, const sim_vu_config *cfg, const sim_vu_ops *ops, void *wl,
               sim_vu_stats *stats);

/* ------------------------------------------------------------------ results */

/*
 * A result document: {"schema", "tool", "command", "config", "host", "started_at",
 * ...}. Workloads add sections with json_object_set_new(doc, key, value); a run's
 * measurement goes in with sim_result_put_run.
 */
json_t *sim_result_new(const char *command, int argc, char **argv, const sim_opt *opts);
/* Adds summary (tps|iops, latency_us, counts, errors, counters), per_type,
 * intervals, measure_steadiness (sim_result_steadiness_json; null when the phase is
 * too short to judge), histograms (serialized), warmup, instances (when > 1), probes,
 * "interrupted", and "failed" with "failure" (the storage fault that stopped it; also
 * set at the top level of doc). Under `key` when non-NULL (e.g. one curve point),
 * else top level. */
void sim_result_put_run(json_t *doc, const char *key, const sim_run *run);
/* A workload's own detail of this rank (docs/mpi.md), after sim_result_put_run(doc,
 * NULL, ...): collective, every rank calls it with its `mine` (borrowed), which rank 0
 * puts in the result's ranks[i][key] for rank i. Returns, on rank 0 of a job of several
 * ranks, the result's "ranks" (borrowed; each holding `key`) for the workload to merge
 * the job's figures from; NULL on other ranks and with one rank. */
const json_t *sim_result_put_rank_detail(json_t *doc, const char *key, const json_t *mine);
/* Atomically write (temp file in the same directory, fsync, rename). SIM_OK or SIM_ERR with a
 * message printed. */
int sim_result_write(const json_t *doc, const char *path);
/* --json PATH: nothing for NULL, the document on stdout for "-", else
 * sim_result_write. SIM_EXIT_OK or SIM_EXIT_FAIL (message printed). */
int sim_result_save(const json_t *doc, const char *path);
/* For a command that failed before its end: when a signal or a storage fault stopped it
 * (sim_interrupted, sim_fault_noted), its result is still saved, with what it did so far
 * and "stopped_by": why (unless set), marked interrupted or failed by the save; after
 * any other failure (a refusal, a bad input) nothing is written. SIM_EXIT_OK, or the
 * save's failure. */
int sim_result_save_stopped(json_t *doc, const char *path, const char *why);
/* Whether --json PATH claims stdout ("-"): the command then prints no text there. */
bool sim_json_on_stdout(const char *path);
/* Atomic, durable file replacement (sim/atomic.c), for every file appsim writes whole:
 * write to the temporary name sim_atomic_tmp_name gives (beside path), then
 * sim_atomic_commit fsyncs fd, renames it over path and fsyncs the directory; on
 * failure the temporary file is removed. fd stays open. sim_atomic_write does all of it
 * for one buffer. All return 0 or an errno value. */
int sim_atomic_tmp_name(const char *path, char *tmp, size_t len);
/* True when path exists and is not a regular file or directory (a device such as
 * /dev/null, a FIFO): it is written in place, never renamed over. */
bool sim_atomic_in_place(const char *path);
int sim_atomic_commit(int fd, const char *tmp, const char *path);
int sim_atomic_write(const char *path, const void *data, size_t len);
/* The text summary printed on stdout at the end of a run (with the device line's
 * foreign-I/O WARNING line, when the result has one, and the measured phase's
 * steadiness: one line, a WARNING when it was not steady). */
void sim_result_print(FILE *out, const json_t *doc);
/* The result's "cache" section: the memory the engine gives the data (buffer_bytes; 0 =
 * no bound of appsim's: the page cache holds what the machine lets it), the data set's
 * bytes at the start of the run, and their ratio (null without a bound or data). A
 * drive's reads per transaction follow this ratio, not the buffer's bytes, so results
 * compare fairly, with each other or with a database server, at equal ratios
 * (docs/fidelity.md). `buffer_is` says what the buffer is for this engine. */
void sim_result_put_cache(json_t *doc, uint64_t buffer_bytes, uint64_t data_bytes,
                          const char *buffer_is);
/* The measured phase judged by the steady-state rule (SIM_STEADY_RULE_PTS), after the
 * fact: its intervals (a result's "intervals", phase "measure") in window parts of
 * equal numbers of intervals, each part's rate its count over its seconds, with the
 * disk's read latency per part (weighted by reads) when the intervals carry device_io:
 * {"rule", "parts", "max_range", "max_slope", "unit", "rates", "mean", "range_pct",
 * "slope_pct", "steady", "device_read_latency_us"}. NULL with fewer than two intervals
 * a part. A phase that is not steady averaged more than one state of the drive or its
 * caches. */
json_t *sim_result_steadiness_json(const json_t *intervals, const char *unit);
/* Its line in the text summary (nothing when the result has none). */
void sim_result_print_steadiness(FILE *out, const json_t *doc);
/* The same warning under a rate curve's text table: one WARNING line naming the points
 * (the first "max", the others by fraction) whose device figures carry it. */
void sim_result_print_curve_warning(FILE *out, const char *indent, const json_t *points);
/* Host section: cpu model, cores, memory, kernel, hostname. */
json_t *sim_host_json(void);

/* ------------------------------------------------------------------ FIFO lock */

/* A lock granted in arrival order, handed directly to the longest waiter (who alone is
 * woken). For the one-writer-at-a-time engines the workloads drive: a pthread mutex
 * lets a releasing thread take it straight back, which starves other waiters for
 * seconds when workers outnumber cores. Not recursive. */
typedef struct sim_fifo_lock sim_fifo_lock;
sim_fifo_lock *sim_fifo_lock_new(void);
void sim_fifo_lock_free(sim_fifo_lock *l);
void sim_fifo_lock_acquire(sim_fifo_lock *l);
/* The same, returning the hand-over: how long the lock was this thread's (granted by
 * the previous owner) before the thread ran again, during which nobody uses it; 0 when
 * it was taken free. */
uint64_t sim_fifo_lock_acquire_handover(sim_fifo_lock *l);
/* Takes the lock only if it is free and nobody waits; true when taken. */
bool sim_fifo_lock_try(sim_fifo_lock *l);
void sim_fifo_lock_release(sim_fifo_lock *l);
/* Threads queued behind the owner (for tests and diagnostics). */
unsigned sim_fifo_lock_waiting(sim_fifo_lock *l);

/* ------------------------------------------------------------------ ranks */

/*
 * Many hosts (docs/mpi.md): the MPI build of appsim, started by mpirun or srun, runs
 * one process (rank) per slot; every rank runs the same command on its own target, in
 * step, and rank 0 writes one merged result. sim/ranks*.c hold every MPI call; a build
 * without MPI, or the MPI build started without a launcher, is one rank and behaves
 * exactly like a single appsim.
 *
 * sim_ranks_init runs first in main: it starts MPI only when a launcher started this
 * process (mpirun, srun), and refuses (usage error) a build without MPI that a launcher
 * started as one of several ranks, since they would all write the same files.
 * sim_ranks_finish runs last: it returns the job's exit status (the highest of the
 * ranks') or, for a rank that failed, tells the others, which stop the job with its
 * rank, host and message (MPI_Abort), so that no rank waits forever.
 */
int sim_ranks_init(int *argc, char ***argv); /* 0, or an exit status */
int sim_ranks_finish(int status);
int sim_ranks_rank(void);         /* 0-based; 0 without MPI */
int sim_ranks_size(void);         /* >= 1 */
const char *sim_ranks_host(void); /* this host's name (uname nodename) */
/* Collective (every rank calls it at the same point): x summed over the ranks, on
 * every rank; x itself with one rank. For a workload's own figures of the job. */
double sim_ranks_total(double x);
/* s with every "{rank}" replaced by the rank and "{host}" by the host name; s itself
 * when it holds neither, else a string that lives as long as the process. */
const char *sim_ranks_expand(const char *s);

/* ------------------------------------------------------------------ signals */

/* SIGINT/SIGTERM set a flag the runs poll (a second one exits at once with 128 +
 * signal). `appsim` then exits 130 (SIGINT) or 143 (SIGTERM) after the command has
 * written its result, so that scripts can tell an interrupted run. */
void sim_signals_install(void);
bool sim_interrupted(void);
/* The first signal seen (SIGINT or SIGTERM), or 0. */
int sim_interrupt_signal(void);

/* ------------------------------------------------------------------ storage faults */

/* Fail-stop (sim/fault.c): the first storage error of a fatal kind (ENOSPC, EDQUOT,
 * EIO, EROFS, ENXIO, ENODEV, EFBIG) is recorded once for the process: every run stops
 * at once (sim_run_done; the result says "failed" and "failure"), writers refuse to
 * write more (so a database is left as its last good commit, not half-written), and
 * `appsim` exits SIM_EXIT_FAIL with the message. Other errors are the caller's. */
bool sim_fault_errno_is_fatal(int err);
/* Records err with a description of what failed ("writing <path> at offset N"), the
 * first time only; returns whether err is a fatal kind (recorded now or before). */
bool sim_fault_note(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The errno of the recorded fault, or 0. Cheap (one atomic load). */
int sim_fault_noted(void);
/* An allocation of `bytes` at file:line failed and the reserve was given back (sim/alloc.c):
 * recorded as the fault, with errno ENOMEM and cause "out of memory", the first time
 * only. Runs stop as after a storage fault; `appsim` exits SIM_EXIT_NOMEM. */
void sim_fault_note_oom(size_t bytes, const char *file, int line);
/* "no space left on device writing ... at offset N", or NULL. */
const char *sim_fault_message(void);
/* {"cause", "errno", "message"} or json null. */
json_t *sim_fault_json(void);
void sim_fault_reset(void); /* for tests */

#ifdef __cplusplus
}
#endif
#endif

/* Internals shared by the files of src/profile/ (not a public API). */
#ifndef SANDLENS_PROFILE_INTERNAL_H
#define SANDLENS_PROFILE_INTERNAL_H

#include "profile/profile.h"

#include <stddef.h>
#include <stdint.h>

/* ---- Building a struct sl_profile (profile_build.c) ---- */

/* New empty profile with the header of rp (kind, times, period). NULL on ENOMEM. */
struct sl_profile *sl_prof_new(int kind, uint64_t start_ns, uint64_t duration_ns, uint64_t period_ns);
/* Intern a string in p's pool; returns the pooled copy (same pointer for
 * equal strings) or NULL on ENOMEM. NULL in, NULL out. */
const char *sl_prof_intern(struct sl_profile *p, const char *s);
/* Index of the frame equal to *f (strings are interned here; identity is
 * kernel address, or module/build-id + module_offset, or the name for
 * unknown frames), adding it when new. -1 on ENOMEM. */
int64_t sl_prof_frame(struct sl_profile *p, const struct sl_frame *f);
/* Append a sample; frames (root first, n entries) are copied. 0 / -ENOMEM. */
int sl_prof_add_sample(struct sl_profile *p, const struct sl_sample *s, const uint32_t *frames,
		       uint32_t n);

/* ---- Call tree used by the folded, SVG and JSON writers (tree.c) ---- */

struct sl_tnode {
	const char *name;      /* display name (interned in the profile) */
	uint32_t frame;        /* index in p->frames, UINT32_MAX for pseudo frames */
	uint64_t total;        /* value of this node and its descendants */
	uint64_t self;         /* value of stacks ending here */
	size_t nchild;
	struct sl_tnode **child; /* sorted by name */
	size_t cap_;
};

/* Build the merged call tree of p (root node named "all"). Each sample
 * contributes `value` (enum sl_prof_value resolved by sl_prof_value_of)
 * along the path: comm, then for off-CPU "[blocked]"/"[runqueue]", then its
 * frames root first. NULL on ENOMEM. */
struct sl_tnode *sl_tree_build(const struct sl_profile *p, int value);
void sl_tree_free(struct sl_tnode *root);
/* The number a sample contributes under value mode v (SL_VALUE_DEFAULT
 * resolved per kind). */
uint64_t sl_prof_value_of(const struct sl_profile *p, const struct sl_sample *s, int v);
/* Resolve SL_VALUE_DEFAULT for p's kind. */
int sl_prof_value_mode(const struct sl_profile *p, int v);
/* Unit word of a value mode: "samples", "ns", "us". */
const char *sl_prof_value_unit(int mode);

/* Per-symbol self/total (a symbol counted once per stack for total). */
struct sl_hot {
	const char *name;
	const char *module;
	uint64_t self;
	uint64_t total;
};
/* Hottest symbols of p by self value (ties: total, then name), at most
 * max entries in *out (malloc'd). Returns the count, or -1 on ENOMEM. */
int sl_prof_hot(const struct sl_profile *p, int value, size_t max, struct sl_hot **out);

/* ---- /proc/<pid>/maps (symbolize_maps.c) ---- */

enum sl_map_class {
	SL_MAP_FILE = 0,      /* regular file */
	SL_MAP_DELETED,       /* file unlinked since mapping: " (deleted)" */
	SL_MAP_MEMFD,         /* "/memfd:NAME (deleted)" */
	SL_MAP_ANON,          /* no path */
	SL_MAP_HEAP,          /* [heap] */
	SL_MAP_STACK,         /* [stack], [stack:TID] */
	SL_MAP_VDSO,          /* [vdso]: an ELF image in memory */
	SL_MAP_VVAR,          /* [vvar], [vvar_vclock]: data, not readable via process_vm_readv */
	SL_MAP_VSYSCALL,      /* [vsyscall]: kernel-half address */
	SL_MAP_SPECIAL,       /* any other [name] (e.g. [uprobes], [sigpage]) */
	SL_MAP_OTHER_PSEUDO,  /* other non-file paths: "anon_inode:...", "/SYSV..." */
};

struct sl_map_entry {
	uint64_t start, end;  /* [start, end) */
	uint64_t offset;      /* file offset of start */
	char perms[5];        /* "r-xp" */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char *path;           /* as printed (trailing " (deleted)" kept); "" for anonymous; malloc'd */
	int cls;              /* enum sl_map_class */
};

/* Parse one maps line (no newline needed). Accepts 8- or 16-digit
 * addresses, any run of spaces between fields, anonymous lines with or
 * without a trailing space (fs/proc/task_mmu.c show_map_vma()). 0 on
 * success (e->path malloc'd), -EINVAL on a malformed line, -ENOMEM. */
int sl_maps_parse_line(const char *line, size_t len, struct sl_map_entry *e);
/* Parse a whole maps file held in buf[len]; malformed lines are skipped.
 * *out (malloc'd) gets *n entries. 0 or -ENOMEM. */
int sl_maps_parse(const char *buf, size_t len, struct sl_map_entry **out, size_t *n);
void sl_maps_free(struct sl_map_entry *v, size_t n);
/* Classify a path (as printed in maps). */
int sl_maps_classify(const char *path);
/* "file" | "deleted" | "memfd" | "anonymous" | "special" | "pseudo" */
const char *sl_map_class_word(int cls);
/* Pointer to the entry containing addr, or NULL (v sorted by start). */
const struct sl_map_entry *sl_maps_find(const struct sl_map_entry *v, size_t n, uint64_t addr);

/* ---- /proc/kallsyms (symbolize_kallsyms.c) ---- */

/* One kernel text symbol, as a lookup gives it. */
struct sl_ksym {
	uint64_t addr;
	char type;          /* nm-style: t T w W ... */
	const char *name;   /* into the table's pool */
	const char *module; /* "[ext4]" -> "ext4"; NULL for vmlinux */
};
/* One stored symbol: 16 bytes (the table holds ~120,000 on a 6.x kernel,
 * half of them __pfx_ padding symbols; 32-byte entries were 1.9 MB more). */
struct sl_ksym_ent {
	uint64_t addr;
	uint32_t name; /* offset of its name in pool_ */
	uint16_t mod;  /* mods[mod - 1]; 0 = vmlinux */
	char type;
	char pad;
};
struct sl_ksyms {
	struct sl_ksym_ent *ents; /* text symbols sorted by addr (stable: file order for ties) */
	size_t n;
	int hidden;               /* every address was 0 (kptr_restrict) */
	const char **mods;        /* module names (into pool_), one per run of a module's symbols */
	size_t nmods;
	char *pool_;
};
/* Parse a kallsyms text buf[len] ("ADDR TYPE NAME [MODULE]" lines; text
 * symbols t/T/w/W kept). 0 / -ENOMEM. */
int sl_ksyms_parse(const char *buf, size_t len, struct sl_ksyms *ks);
void sl_ksyms_free(struct sl_ksyms *ks);
/* Symbol containing addr: the last one whose address <= addr, written to
 * *out (its strings point into the table); returns out, or NULL when hidden
 * or addr is below the first symbol. */
const struct sl_ksym *sl_ksyms_lookup(const struct sl_ksyms *ks, uint64_t addr, struct sl_ksym *out);
/* Symbol i (< ks->n) of the sorted table, written to *out; returns out. */
const struct sl_ksym *sl_ksyms_at(const struct sl_ksyms *ks, size_t i, struct sl_ksym *out);
/* Index of the symbol sl_ksyms_lookup finds for addr; ks->n when none. */
size_t sl_ksyms_index(const struct sl_ksyms *ks, uint64_t addr);
/* Up to max addresses of symbols named name (one name can be at several
 * addresses: duplicate static functions). Returns how many exist. */
size_t sl_ksyms_addrs(const struct sl_ksyms *ks, const char *name, uint64_t *addrs, size_t max);
/* The table of the kallsyms file at path (at most SL_SYM_KALLSYMS_MAX
 * bytes), one per path in the process, shared by its users (the
 * symbolizers, the net module's drop locations, the stall module's
 * stacks): read at the first get, freed at the last put (a table is
 * ~7 MB at ~120,000 text symbols). Immutable: lookups need no lock.
 * Returns a table with symbols and a reference, or NULL with *state (may be
 * NULL) -1 when every address is hidden (kptr_restrict) or no text symbol
 * is listed, -2 when the file is unreadable or memory ran out; a failed
 * read is not kept (the next get reads again). */
const struct sl_ksyms *sl_ksyms_shared_get(const char *path, int *state);
/* Drop a reference of sl_ksyms_shared_get (NULL: nothing). */
void sl_ksyms_shared_put(const struct sl_ksyms *ks);

/* ---- ELF modules (symbolize_elf.c) ---- */

struct sl_esym {
	uint64_t addr;  /* st_value */
	uint64_t size;  /* st_size, 0 = unknown */
	uint32_t name;  /* offset in names */
	uint8_t bind;   /* STB_* */
};
struct sl_pt_load {
	uint64_t offset, vaddr, filesz;
	uint32_t flags; /* p_flags: PF_X, PF_W, PF_R */
};
struct sl_elf_info {
	char build_id[81];      /* lowercase hex, "" when none */
	char debuglink[256];    /* .gnu_debuglink file name, "" when none */
	uint32_t debuglink_crc;
	int has_symtab;         /* .symtab seen (not stripped) */
	size_t nload;
	struct sl_pt_load load[16];
	size_t nsyms;
	struct sl_esym *syms;   /* functions, sorted by addr */
	char *names;
	size_t names_len;
};
/* Read an ELF image from memory (never trusts sizes; garbage in gives
 * -EINVAL, never a crash). Symbols of .symtab and .dynsym (STT_FUNC,
 * STT_GNU_IFUNC) are merged. 0 / -EINVAL / -ENOMEM. */
int sl_elf_read_mem(const void *img, size_t len, struct sl_elf_info *out);
/* Same from an open fd (mmap'd by libelf). */
int sl_elf_read_fd(int fd, struct sl_elf_info *out);
void sl_elf_info_free(struct sl_elf_info *e);
/* Add the symbols of dbg (a separate debug file of the same link) to e. */
int sl_elf_merge_syms(struct sl_elf_info *e, const struct sl_elf_info *dbg);
/* ELF virtual address of file offset off (PT_LOAD segments), or off itself
 * when no segment holds it. */
uint64_t sl_elf_off_to_vaddr(const struct sl_elf_info *e, uint64_t off);
/* Whether file offset off is code: 1 when an executable PT_LOAD segment
 * (PF_X) holds it in its file bytes, 0 when none does, -1 when the module
 * has no PT_LOAD segments (unknown). A return address that is not code
 * (e.g. a pointer into .data/.bss read by a frame-pointer walk through code
 * built without frame pointers: glibc's malloc bins point at themselves)
 * is garbage (System V ABI: return addresses are in text). */
int sl_elf_off_is_text(const struct sl_elf_info *e, uint64_t off);
/* Symbol containing vaddr, or NULL. */
const struct sl_esym *sl_elf_lookup(const struct sl_elf_info *e, uint64_t vaddr);

/* ---- Flame graph helpers (flamegraph.c, flame_meta.c, difftree.c) ---- */

/* XML/HTML text escape of at most max bytes of s ("..": cut, never inside
 * a character); control bytes (< 0x20, 0x7f) become '?' and invalid UTF-8
 * U+FFFD (one per maximal subpart, sl_utf8_seq), so the output is always
 * well-formed XML 1.0 in UTF-8 whatever bytes a symbol or comm holds. */
void sl_xml_esc(const char *s, size_t max, FILE *out);

/* The title metadata line of a flame graph: "container X, pod Y, host H,
 * 2026-12-04T10:00:00Z .. 10:00:10Z UTC (10.0 s), cpu samples" from opts'
 * fields (the range from p when opts has none); only known parts. Writes
 * at most sz bytes (NUL-terminated); returns the length. */
size_t sl_flame_meta_line(const struct sl_profile *p, const struct sl_flame_opts *o, char *buf, size_t sz);
/* The sample-type label: opts->sample_type, else from the kind and value
 * mode ("cpu samples", "off-CPU us", ...). */
const char *sl_flame_sample_type(const struct sl_profile *p, const struct sl_flame_opts *o, int mode);
/* Default title of a differential flame graph of profiles of kind (enum
 * sl_prof_kind): a static string, or one written into buf (len bytes). */
const char *sl_flame_diff_title(int kind, char *buf, size_t len);
/* Frame kind letter used by the HTML page: 'u' user, 'k' kernel, 'j' JIT,
 * 'x' unresolved, 'p' pseudo (comm, off-CPU state, root). f NULL = pseudo. */
char sl_flame_kind(const struct sl_frame *f);

/* Merged call tree of two profiles for differential flame graphs. */
struct sl_dnode {
	const char *name;
	const struct sl_frame *frame; /* from cur (else base); NULL for pseudo frames */
	uint64_t cur, cur_self;       /* cur's total and self value of this path */
	uint64_t base, base_self;     /* base's, raw (unscaled) */
	size_t nchild;
	struct sl_dnode **child;      /* sorted by name */
};
struct sl_dtree {
	struct sl_dnode *root;
	uint64_t base_total, cur_total;
	double scale;          /* cur_total / base_total (1 when base_total is 0) */
	double max_abs_delta;  /* max |delta| over every node (0 when identical) */
	int mode;              /* resolved value mode (enum sl_prof_value) */
};
/* Build the merged tree of base and cur under value mode value. 0,
 * -EINVAL (kinds differ), -ENOMEM. */
int sl_dtree_build(const struct sl_profile *base, const struct sl_profile *cur, int value, struct sl_dtree *t);
void sl_dtree_free(struct sl_dtree *t);
/* Normalized delta of a node: cur - base * scale. */
double sl_dnode_delta(const struct sl_dtree *t, const struct sl_dnode *n);
/* Differential fill colour "rgb(r,g,b)" of delta d (flamegraph.pl's
 * scheme): red for d > 0, blue for d < 0, white-ish at 0, intensity
 * |d| / max_abs. */
void sl_diff_color(double d, double max_abs, char *buf, size_t sz);

/* Per-symbol self/total of both profiles (hot-table rows of a diff). */
struct sl_hot_diff {
	const char *name;
	const char *module;
	uint64_t base_self, base_total, cur_self, cur_total;
	double delta_self; /* cur_self - base_self * scale */
};
/* Every symbol of either profile, by |delta_self| descending (ties:
 * cur_self, name), at most max in *out (malloc'd). Count or -1 (ENOMEM). */
int sl_prof_hot_diff(const struct sl_profile *base, const struct sl_profile *cur, int value, double scale,
		     size_t max, struct sl_hot_diff **out);
/* The HTML page of a diff (flame_html.c), t built from base and cur. */
int sl_flame_html_diff(const struct sl_profile *base, const struct sl_profile *cur, const struct sl_dtree *t,
		       const struct sl_flame_opts *o, FILE *out);

#endif

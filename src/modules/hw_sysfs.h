/* hw module: the sysfs counters, read once per hw.interval from a
 * configurable root (hw.sysfs_root, default /sys; tests point it at a
 * fixture tree). Every attribute is opened O_RDONLY|O_NONBLOCK|O_NOFOLLOW
 * and read only when fstat says it is a regular file, at most
 * HW_ATTR_MAX bytes: a FIFO, device node or symlink planted in a tree is
 * an error counted in hw_scan.errors, never a hang. Directories are
 * followed (sysfs device links are symlinks to directories).
 *
 * Sources (kernel documentation in Documentation/ABI/testing/):
 *   EDAC    <root>/devices/system/edac/mc/mc<N>/{ce_count,ue_count,
 *           ce_noinfo_count,ue_noinfo_count,mc_name}, csrow<K>/{ce_count,
 *           ue_count,ch<C>_dimm_label}, dimm<K>/{dimm_ce_count,dimm_ue_count,
 *           dimm_label}                                  (sysfs-devices-edac)
 *   AER     <root>/bus/pci/devices/<BDF>/aer_dev_{correctable,nonfatal,fatal}:
 *           "<Name> <count>" lines, the last TOTAL_ERR_COR / TOTAL_ERR_NONFATAL
 *           / TOTAL_ERR_FATAL                      (sysfs-bus-pci-devices-aer_stats)
 *   link    <root>/bus/pci/devices/<BDF>/{current,max}_link_{speed,width}
 *           ("8.0 GT/s PCIe", "16")                (sysfs-bus-pci)
 *   IB      <root>/class/infiniband/<dev>/ports/<n>/{counters,hw_counters}/<name>
 *           one number each                        (sysfs-class-infiniband)
 */
#ifndef SANDLENS_MODULES_HW_SYSFS_H
#define SANDLENS_MODULES_HW_SYSFS_H

#include <stddef.h>
#include <stdint.h>

#define HW_ATTR_MAX 4096 /* bytes read of one attribute */
#define HW_NAME 64

enum hw_aer_sev { HW_AER_COR = 0, HW_AER_NONFATAL, HW_AER_FATAL, HW_AER_NSEV };
extern const char *const hw_aer_sev_names[HW_AER_NSEV];  /* "correctable", "nonfatal", "fatal" */
extern const char *const hw_aer_sev_files[HW_AER_NSEV];  /* "aer_dev_correctable", ... */

struct hw_edac_mc {
	char controller[16]; /* N of mc<N>, as node_exporter's label */
	char name[HW_NAME];  /* mc_name */
	uint64_t ce, ue, ce_noinfo, ue_noinfo;
};

/* A csrow or a dimm of a controller. */
struct hw_edac_row {
	char controller[16];
	char row[16]; /* K of csrow<K> / dimm<K> */
	int is_dimm;
	char label[HW_NAME]; /* dimm_label / ch0_dimm_label ("" when none) */
	uint64_t ce, ue;
};

/* One line of an aer_dev_* file. total: the TOTAL_ERR_* line. */
struct hw_aer_ctr {
	char bdf[16];
	int sev; /* enum hw_aer_sev */
	int total;
	char name[32];
	uint64_t v;
};

struct hw_link {
	char bdf[16];
	double speed, max_speed; /* GT/s */
	unsigned width, max_width;
	int degraded; /* 1: below max (width, or speed when counted) */
};

struct hw_ib_ctr {
	char dev[HW_NAME];
	unsigned port;
	int hw; /* 1: hw_counters (driver-specific), 0: counters (IBA PortCounters) */
	char name[HW_NAME];
	uint64_t v;
};

struct hw_scan {
	struct hw_edac_mc *mc;
	size_t nmc;
	struct hw_edac_row *rows;
	size_t nrows;
	struct hw_aer_ctr *aer;
	size_t naer;
	struct hw_link *links;
	size_t nlinks;
	struct hw_ib_ctr *ib;
	size_t nib;
	/* what was there: directories seen per source (for /healthz at init) */
	unsigned edac_dirs, pci_dirs, aer_devs, link_devs, ib_ports;
	uint64_t files;  /* attributes read */
	uint64_t errors; /* attributes that failed (not regular, unreadable, unparsable) */
	uint64_t cut;    /* entries not kept: hw.max_entries reached */
	size_t cap;      /* the bound over all arrays together */
};

/* Read attribute rel (relative to dirfd) into buf (NUL-terminated,
 * trailing newline removed). Opened non-blocking, no symlink as last
 * component, regular files only. Returns the length, or -errno (-EINVAL:
 * not a regular file). */
int hw_read_attr(int dirfd, const char *rel, char *buf, size_t len);

/* Parse a decimal counter ("123\n"): 0 or -EINVAL. */
int hw_parse_u64(const char *s, uint64_t *v);
/* Parse a PCIe link speed as the kernel prints it (pci_speed_string():
 * "2.5 GT/s PCIe", "8.0 GT/s PCIe", older "5 GT/s"): GT/s into *gts.
 * "Unknown" and anything else: -EINVAL. */
int hw_parse_link_speed(const char *s, double *gts);
/* Parse an aer_dev_* file: for each "<Name> <count>" line calls
 * cb(name, count, arg). Returns lines parsed, or -EINVAL if a line is
 * malformed (the ones before it were delivered). */
int hw_parse_aer(const char *text, void (*cb)(const char *name, uint64_t v, void *arg), void *arg);
/* 1 when a PCI address is "DDDD:BB:DD.F" (hex), else 0. */
int hw_is_bdf(const char *s);

/* Scan every source under root into s (zeroed first; max_entries bounds
 * the sum of entries kept). speed_counts: a link below its max speed is
 * degraded too (else width only). Returns 0 (a missing source is empty,
 * not an error) or -ENOMEM. */
int hw_scan_run(const char *root, size_t max_entries, int speed_counts, struct hw_scan *s);
void hw_scan_free(struct hw_scan *s);

#endif

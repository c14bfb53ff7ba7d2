/*
 * storage/identity_nvme.c: NVMe identify data (controller and namespace) for the drive
 * identity, through libnvme's admin passthrough on the namespace block device. Built
 * without libnvme (APPSIM_HAVE_LIBNVME unset) the object says so; sysfs fields are
 * still filled by identity.c either way. Reading identify needs CAP_SYS_ADMIN.
 */
#include "storage/target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef APPSIM_HAVE_LIBNVME
#include <endian.h>
#include <libnvme.h>

/* Identify strings are space-padded, not NUL-terminated. */
static json_t *fixed_str(const char *s, size_t n)
{
    char buf[64];
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == 0))
        buf[--n] = 0;
    return json_string(buf);
}

json_t *st_nvme_identify_json(const char *disk)
{
    if (strncmp(disk, "nvme", 4) != 0) return NULL;
    json_t *j = json_object();
    json_object_set_new(j, "source", json_string("libnvme identify"));
    char node[128];
    snprintf(node, sizeof node, "/dev/%s", disk);
    int fd = open(node, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        json_object_set_new(j, "error", json_sprintf("open %s: %s", node, strerror(errno)));
        return j;
    }
    struct nvme_id_ctrl ctrl;
    if (nvme_identify_ctrl(fd, &ctrl) != 0) {
        json_object_set_new(j, "error", json_sprintf("identify controller: %s", strerror(errno)));
        close(fd);
        return j;
    }
    json_object_set_new(j, "model", fixed_str(ctrl.mn, sizeof ctrl.mn));
    json_object_set_new(j, "serial", fixed_str(ctrl.sn, sizeof ctrl.sn));
    json_object_set_new(j, "firmware", fixed_str(ctrl.fr, sizeof ctrl.fr));
    json_object_set_new(j, "pci_vendor_id", json_integer(le16toh(ctrl.vid)));
    json_object_set_new(j, "pci_subsystem_vendor_id", json_integer(le16toh(ctrl.ssvid)));
    uint32_t ver = le32toh(ctrl.ver);
    json_object_set_new(j, "nvme_version",
                        json_sprintf("%u.%u.%u", ver >> 16, (ver >> 8) & 0xff, ver & 0xff));
    json_object_set_new(j, "mdts", json_integer(ctrl.mdts));
    json_object_set_new(j, "namespaces", json_integer(le32toh(ctrl.nn)));
    json_object_set_new(j, "volatile_write_cache", json_boolean(ctrl.vwc & 1));
    __u32 nsid = 0;
    struct nvme_id_ns ns;
    if (nvme_get_nsid(fd, &nsid) == 0 && nvme_identify_ns(fd, nsid, &ns) == 0) {
        unsigned fmt = ns.flbas & 0x0f;
        json_object_set_new(j, "nsid", json_integer(nsid));
        json_object_set_new(j, "ns_size_blocks", json_integer((json_int_t)le64toh(ns.nsze)));
        json_object_set_new(j, "ns_capacity_blocks", json_integer((json_int_t)le64toh(ns.ncap)));
        json_object_set_new(j, "ns_used_blocks", json_integer((json_int_t)le64toh(ns.nuse)));
        json_object_set_new(j, "lba_bytes", json_integer(1 << ns.lbaf[fmt].ds));
        json_object_set_new(j, "lba_formats", json_integer(ns.nlbaf + 1));
        json_object_set_new(j, "optimal_io_boundary_blocks", json_integer(le16toh(ns.noiob)));
        json_object_set_new(j, "preferred_write_granularity_blocks",
                            json_integer(le16toh(ns.npwg) + 1));
        json_object_set_new(j, "atomic_write_unit_blocks", json_integer(le16toh(ns.nawupf) + 1));
    } else {
        json_object_set_new(j, "ns_error", json_sprintf("identify namespace: %s", strerror(errno)));
    }
    close(fd);
    return j;
}
#else
json_t *st_nvme_identify_json(const char *disk)
{
    if (strncmp(disk, "nvme", 4) != 0) return NULL;
    return json_pack("{s:s}", "error",
                     "appsim was built without libnvme: identify data not read (the sysfs "
                     "fields above still apply)");
}
#endif

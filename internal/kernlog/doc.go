// Package kernlog reads the kernel's own record of IO errors on block
// devices: the lines of its log (/dev/kmsg) that name a device and an
// error since a moment, and a SCSI device's count of failed commands
// (ioerr_cnt under /sys). A diagnosis quotes them beside the errors fio
// saw. Where the host does not show them (no permission, a container
// without /dev/kmsg, a device that is not SCSI) it says nothing.
package kernlog

package runner

// InUse reports whether anything uses the device.
func (u DeviceUse) InUse() bool { return len(u.Mounts)+len(u.Holders)+len(u.Swap) > 0 }

// SPDX-License-Identifier: Apache-2.0

package inspect

import (
	"path"
	"regexp"
	"slices"
)

var (
	reRootHub  = regexp.MustCompile(`^usb[0-9]+$`)
	reUSBDev   = regexp.MustCompile(`^[0-9]+-[0-9.]+$`)
	reUSBIface = regexp.MustCompile(`^[0-9]+-[0-9.]+:[0-9]+\.[0-9]+$`)
)

func (c *collector) usb(ifacePath string) *USB {
	u := &USB{Interface: path.Base(ifacePath)}
	dev := ifacePath
	if reUSBIface.MatchString(path.Base(dev)) {
		dev = path.Dir(dev)
	}
	u.Path = path.Base(dev)
	u.SpeedMbps, _ = c.str(dev + "/speed")
	u.Version, _ = c.str(dev + "/version")
	u.VendorID, _ = c.str(dev + "/idVendor")
	u.ProductID, _ = c.str(dev + "/idProduct")
	u.Manufacturer, _ = c.str(dev + "/manufacturer")
	u.Product, _ = c.str(dev + "/product")
	hub := dev
	for hub != "/" && hub != "." && !reRootHub.MatchString(path.Base(hub)) {
		hub = path.Dir(hub)
	}
	if hub == "/" || hub == "." {
		return u
	}
	hc := path.Dir(hub)
	u.HostController = HostController{
		BusID: path.Base(hc), Path: hc,
		Bus:    c.linkBase(hc + "/subsystem"),
		Driver: c.linkBase(hc + "/driver"),
	}
	// Every device on every root hub of this controller shares its IRQ.
	entries, _ := c.fs.ReadDir(hc)
	for _, e := range entries {
		if reRootHub.MatchString(e) {
			c.usbWalk(hc+"/"+e, dev, &u.Neighbours, 0)
		}
	}
	return u
}

func (c *collector) usbWalk(dir, self string, out *[]USBDevice, depth int) {
	if depth > 7 {
		return
	}
	entries, err := c.fs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !reUSBDev.MatchString(e) {
			continue
		}
		p := dir + "/" + e
		if p != self {
			ud := USBDevice{Path: e}
			ud.Product, _ = c.str(p + "/product")
			ud.Speed, _ = c.str(p + "/speed")
			sub, _ := c.fs.ReadDir(p)
			for _, s := range sub {
				if reUSBIface.MatchString(s) {
					if drv := c.linkBase(p + "/" + s + "/driver"); drv != "" && !slices.Contains(ud.Drivers, drv) {
						ud.Drivers = append(ud.Drivers, drv)
					}
				}
			}
			if !isHub(ud.Drivers) {
				*out = append(*out, ud)
			}
		}
		c.usbWalk(p, self, out, depth+1)
	}
}

func isHub(drivers []string) bool {
	return len(drivers) == 1 && drivers[0] == "hub"
}

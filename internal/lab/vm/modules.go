// SPDX-License-Identifier: Apache-2.0

package vm

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// ModuleIndex is a kernel's module tree as depmod(8) describes it:
// modules.dep (each module's file and its dependencies, transitively),
// modules.alias (alias patterns) and modules.builtin (modules compiled
// into the kernel, which need no loading).
type ModuleIndex struct {
	// Dir is the modules directory (…/lib/modules/VERSION).
	Dir string
	// Path maps a module name ("cdc_ncm") to its file relative to Dir.
	Path map[string]string
	// Deps maps a module name to the names of the modules it needs.
	Deps map[string][]string
	// Builtin holds the names of modules built into the kernel.
	Builtin map[string]bool
	// Aliases maps patterns (shell globs) to module names, in file order.
	Aliases []ModuleAlias
}

// ModuleAlias is one line of modules.alias.
type ModuleAlias struct{ Pattern, Module string }

// ModuleName turns a module file or name ("kernel/drivers/net/usb/cdc-ether.ko.xz",
// "cdc-ether") into the kernel's module name ("cdc_ether").
func ModuleName(s string) string {
	b := path.Base(s)
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		b = strings.TrimSuffix(b, ext)
	}
	b = strings.TrimSuffix(b, ".ko")
	return strings.ReplaceAll(b, "-", "_")
}

// LoadModuleIndex reads modules.dep, modules.alias and modules.builtin from dir.
// modules.dep must exist; the others are optional.
func LoadModuleIndex(dir string) (*ModuleIndex, error) {
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("module tree %s has no modules.dep (run depmod -b BASE VERSION, or let wirespeed fetch the kernel): %w", dir, err)
	}
	defer f.Close()
	idx := &ModuleIndex{Dir: dir}
	if err := idx.parseDep(f); err != nil {
		return nil, fmt.Errorf("%s/modules.dep: %w", dir, err)
	}
	if f, err := os.Open(filepath.Join(dir, "modules.alias")); err == nil {
		err = idx.parseAlias(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s/modules.alias: %w", dir, err)
		}
	}
	if f, err := os.Open(filepath.Join(dir, "modules.builtin")); err == nil {
		idx.parseBuiltin(f)
		f.Close()
	}
	return idx, nil
}

func (idx *ModuleIndex) parseDep(r io.Reader) error {
	idx.Path = map[string]string{}
	idx.Deps = map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		file, deps, ok := strings.Cut(t, ":")
		if !ok {
			return fmt.Errorf("line %d: no ':' in %q", line, t)
		}
		name := ModuleName(file)
		idx.Path[name] = strings.TrimSpace(file)
		var dn []string
		for _, d := range strings.Fields(deps) {
			dn = append(dn, ModuleName(d))
		}
		idx.Deps[name] = dn
	}
	return sc.Err()
}

func (idx *ModuleIndex) parseAlias(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "alias" {
			continue
		}
		idx.Aliases = append(idx.Aliases, ModuleAlias{Pattern: f[1], Module: ModuleName(f[2])})
	}
	return sc.Err()
}

func (idx *ModuleIndex) parseBuiltin(r io.Reader) {
	idx.Builtin = map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			idx.Builtin[ModuleName(t)] = true
		}
	}
}

// lookup finds the module a name or alias stands for. It returns "" and
// builtin=true for modules compiled into the kernel.
func (idx *ModuleIndex) lookup(name string) (mod string, builtin bool, err error) {
	n := ModuleName(name)
	if _, ok := idx.Path[n]; ok {
		return n, false, nil
	}
	if idx.Builtin[n] {
		return "", true, nil
	}
	for _, a := range idx.Aliases {
		if ok, _ := path.Match(a.Pattern, name); ok {
			if _, ok := idx.Path[a.Module]; ok {
				return a.Module, false, nil
			}
			if idx.Builtin[a.Module] {
				return "", true, nil
			}
		}
	}
	return "", false, fmt.Errorf("kernel module %q is not in %s (neither a module, a built-in, nor an alias): this kernel cannot run the scenario; use a kernel built with it (--kernel/--modules) or add it with --modules-dir", name, idx.Dir)
}

// Resolve returns the modules to load for names (module names or aliases),
// dependencies first, each once. Built-in modules are left out. A name
// that the index does not know is an error naming it.
func (idx *ModuleIndex) Resolve(names ...string) ([]string, error) {
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, chain []string) error
	visit = func(n string, chain []string) error {
		switch state[n] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("module dependency cycle: %s -> %s", strings.Join(chain, " -> "), n)
		}
		state[n] = 1
		deps := append([]string(nil), idx.Deps[n]...)
		sort.Strings(deps) // modules.dep already lists every transitive dep; order them stably
		for _, d := range deps {
			if _, ok := idx.Path[d]; !ok {
				if idx.Builtin[d] {
					continue
				}
				return fmt.Errorf("module %s needs %s, which modules.dep does not list: the module tree in %s is incomplete", n, d, idx.Dir)
			}
			if err := visit(d, append(chain, n)); err != nil {
				return err
			}
		}
		state[n] = 2
		order = append(order, n)
		return nil
	}
	for _, name := range names {
		m, builtin, err := idx.lookup(name)
		if err != nil {
			return nil, err
		}
		if builtin {
			continue
		}
		if err := visit(m, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

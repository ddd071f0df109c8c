package scenario

import (
	"cmp"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// poolOptionFields are the pool keys only the scheduler process reads.
func (d *decoder) poolOptionFields(o *PoolOptions, cfg *scheduler.PoolConfig) []field {
	return []field{
		d.boolTo(keyForbidImmediateOperations, &o.ForbidImmediateOperations),
		d.boolTo(keyCreateEphemeralSubpools, &o.CreateEphemeralSubpools),
		{key: keyEphemeralSubpoolConfig, set: func(v *yaml.Node, p string) error {
			frag, err := d.poolFragment(v, p, ephemeralKey)
			if err != nil {
				return err
			}
			o.EphemeralSubpoolConfig = &frag
			return nil
		}},
		{key: keyOffloadingSettings, set: func(v *yaml.Node, p string) (err error) {
			o.OffloadingSettings, err = d.offloading(v, p)
			return err
		}},
		{key: keyConfigPresets, set: func(v *yaml.Node, p string) error {
			names, err := d.stringList(v, p)
			if err != nil {
				return err
			}
			items, _ := d.sequence(v, p)
			for i, name := range names {
				if err := d.liveName(items[i], joinIndex(p, i), "preset name", name); err != nil {
					return err
				}
				if j := slices.Index(names[:i], name); j >= 0 {
					return d.fail(joinIndex(p, i), deref(items[i]), "preset %q is listed twice (first at %s)", name, joinIndex(p, j))
				}
			}
			o.ConfigPresets = names
			return nil
		}},
		{key: keySubmitACL, set: func(v *yaml.Node, p string) error {
			users, err := d.stringList(v, p)
			if err != nil {
				return err
			}
			items, _ := d.sequence(v, p)
			for i, u := range users {
				if u != "*" {
					if err := d.liveName(items[i], joinIndex(p, i), "user name", u); err != nil {
						return err
					}
				}
				if j := slices.Index(users[:i], u); j >= 0 {
					return d.fail(joinIndex(p, i), deref(items[i]), "user %q is listed twice (first at %s)", u, joinIndex(p, j))
				}
			}
			if users == nil {
				users = []string{} // given and empty: nobody
			}
			o.SubmitACL = users
			return nil
		}},
		d.boolTo(keyEnableLightweightOperations, &cfg.EnableLightweightOperations),
	}
}

// offloading decodes offloading_settings: a mapping from a tree to `{pool,
// share}`, sorted by tree.
func (d *decoder) offloading(n *yaml.Node, path string) ([]Offloading, error) {
	entries, err := d.entries(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]Offloading, 0, len(entries))
	for _, e := range entries {
		if err := subjects.ValidateToken("tree name", e.key); err != nil {
			return nil, d.fail(e.path, e.keyNode, "%s", causeText(err, subjects.ErrInvalidToken))
		}
		o := Offloading{Tree: e.key, Share: 1}
		_, err := d.object(e.val, e.path, []field{
			{key: "pool", set: func(v *yaml.Node, p string) error {
				s, err := d.str(v, p)
				if err != nil {
					return err
				}
				if err := subjects.ValidateToken("pool name", s); err != nil {
					return d.fail(p, deref(v), "%s", causeText(err, subjects.ErrInvalidToken))
				}
				o.Pool = s
				return nil
			}},
			{key: "share", set: func(v *yaml.Node, p string) error {
				x, err := d.number(v, p)
				if err != nil {
					return err
				}
				if x <= 0 || x > 1 {
					return d.fail(p, deref(v), "share must be in (0, 1], got %g", x)
				}
				o.Share = x
				return nil
			}},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Offloading) int { return cmp.Compare(a.Tree, b.Tree) })
	return out, nil
}

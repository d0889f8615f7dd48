package config

// Show loads the profile name ("" = the one Load would select) and returns
// it as Loaded.Show renders it.
func Show(opts LoadOptions, name string) ([]byte, error) {
	if name != "" {
		opts.Profile = name
	}
	ld, err := Load(opts)
	if err != nil {
		return nil, err
	}
	return ld.Show()
}

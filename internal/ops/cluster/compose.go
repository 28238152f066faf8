package cluster

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/weftworks/weft/internal/safefile"
)

// Compose is the part of a compose file the cluster reads.
type Compose struct {
	Services map[string]Service `yaml:"services"`
}

// Service is one compose service.
type Service struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Deploy struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// Load reads a compose file.
func Load(path string) (*Compose, error) {
	data, err := safefile.Read(path, 4<<20, "compose file")
	if err != nil {
		return nil, err
	}
	var c Compose
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Services) == 0 {
		return nil, fmt.Errorf("%s: no services", path)
	}
	return &c, nil
}

// IsWeft reports whether the service runs the weft image (built from this repository).
func (s Service) IsWeft() bool { return s.Build != nil }

// ContainerPorts are the ports the service listens on inside its container.
func (s Service) ContainerPorts() []int {
	var out []int
	for _, p := range s.Ports {
		parts := strings.Split(p, ":")
		if n, err := strconv.Atoi(parts[len(parts)-1]); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// Order is the services in an order that starts each after what it depends on.
func (c *Compose) Order() ([]string, error) {
	var out []string
	state := map[string]int{}
	var visit func(string) error
	visit = func(n string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("services depend on each other in a cycle through %s", n)
		case 2:
			return nil
		}
		state[n] = 1
		s, ok := c.Services[n]
		if !ok {
			return fmt.Errorf("depends_on names %q, which is not a service", n)
		}
		for _, d := range slices.Sorted(maps.Keys(s.DependsOn)) {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, n)
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(c.Services)) {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Problems lists what keeps the file from being both a valid production description and
// runnable by the cluster: images pinned by version, weft services with a command and a health
// check, dependencies that exist, variables that have defaults or say what to set.
func (c *Compose) Problems() []string {
	var out []string
	if _, err := c.Order(); err != nil {
		out = append(out, err.Error())
	}
	unset := regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`)
	for _, n := range slices.Sorted(maps.Keys(c.Services)) {
		s := c.Services[n]
		switch {
		case s.IsWeft() && len(s.Command) == 0:
			out = append(out, n+": a weft service needs a command (the weft subcommand it runs)")
		case !s.IsWeft() && s.Image == "":
			out = append(out, n+": no image and no build")
		case !s.IsWeft():
			name, tag, ok := strings.Cut(s.Image, ":")
			if !ok || tag == "" || tag == "latest" || !regexp.MustCompile(`\d`).MatchString(tag) {
				out = append(out, fmt.Sprintf("%s: image %q is not pinned to a version", n, s.Image))
			}
			if name != "postgres" {
				out = append(out, fmt.Sprintf("%s: image %q: the cluster knows how to run postgres only", n, s.Image))
			}
		}
		if len(s.Healthcheck.Test) == 0 {
			out = append(out, n+": no healthcheck")
		}
		for k, v := range s.Environment {
			if m := unset.FindStringSubmatch(v); m != nil {
				out = append(out, fmt.Sprintf("%s: %s uses ${%s} with no default or message: write ${%s:-} or ${%s:?why}", n, k, m[1], m[1], m[1]))
			}
		}
	}
	return out
}

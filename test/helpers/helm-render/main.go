// Renders a Helm chart the way Helm's engine does, for the tests: no Helm binary can be installed here. Helm's
// engine is Go's text/template with Sprig's functions (env and expandenv removed) and its own include, required,
// toYaml and toJson, `missingkey=zero` with "<no value>" printed as nothing, over .Values (values.yaml merged with
// the overrides), .Release and .Chart. Each template of templates/ whose name does not start with "_" is rendered;
// the non-empty ones are printed, separated by "---".
//
// Usage: helm-render CHART_DIR RELEASE NAMESPACE [OVERRIDES_JSON]
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func readYAML(path string) map[string]interface{} {
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	out := map[string]interface{}{}
	if err := yaml.Unmarshal(b, &out); err != nil {
		fail(fmt.Errorf("%s: %w", path, err))
	}
	return out
}

// merge lays src over dst: maps merge key by key, anything else replaces (Helm's coalescing of user values).
func merge(dst, src map[string]interface{}) map[string]interface{} {
	for k, v := range src {
		if sv, ok := v.(map[string]interface{}); ok {
			if dv, ok := dst[k].(map[string]interface{}); ok {
				dst[k] = merge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

func toYAML(v interface{}) string {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func main() {
	if len(os.Args) < 4 {
		fail(errors.New("usage: helm-render CHART_DIR RELEASE NAMESPACE [OVERRIDES_JSON]"))
	}
	dir, release, namespace := os.Args[1], os.Args[2], os.Args[3]
	chart := readYAML(filepath.Join(dir, "Chart.yaml"))
	values := readYAML(filepath.Join(dir, "values.yaml"))
	if len(os.Args) > 4 {
		overrides := map[string]interface{}{}
		if err := json.Unmarshal([]byte(os.Args[4]), &overrides); err != nil {
			fail(err)
		}
		values = merge(values, overrides)
	}

	root := template.New("chart").Option("missingkey=zero")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYAML
	funcs["toJson"] = func(v interface{}) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var b strings.Builder
		err := root.ExecuteTemplate(&b, name, data)
		return b.String(), err
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	root.Funcs(funcs)

	var names []string
	templates := filepath.Join(dir, "templates")
	err := filepath.Walk(templates, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, err := root.New(rel).Parse(string(b)); err != nil {
			return err
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		fail(err)
	}
	sort.Strings(names)
	data := map[string]interface{}{
		"Values":  values,
		"Release": map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true},
		"Chart": map[string]interface{}{
			"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"],
		},
	}
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "_") {
			continue
		}
		var b strings.Builder
		if err := root.ExecuteTemplate(&b, name, data); err != nil {
			fail(err)
		}
		text := strings.ReplaceAll(b.String(), "<no value>", "")
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Printf("---\n# Source: %s\n%s\n", name, strings.TrimSpace(text))
	}
}

package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// SPDX is the subset of an SPDX 2.3 JSON document the release writes.
type SPDX struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      SPDXCreation       `json:"creationInfo"`
	Packages          []SPDXPackage      `json:"packages"`
	Relationships     []SPDXRelationship `json:"relationships"`
}

// SPDXCreation says when and by what the document was made.
type SPDXCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// SPDXPackage is one component.
type SPDXPackage struct {
	Name             string         `json:"name"`
	SPDXID           string         `json:"SPDXID"`
	VersionInfo      string         `json:"versionInfo,omitempty"`
	Supplier         string         `json:"supplier,omitempty"`
	DownloadLocation string         `json:"downloadLocation"`
	FilesAnalyzed    bool           `json:"filesAnalyzed"`
	LicenseConcluded string         `json:"licenseConcluded"`
	LicenseDeclared  string         `json:"licenseDeclared"`
	CopyrightText    string         `json:"copyrightText"`
	Checksums        []SPDXChecksum `json:"checksums,omitempty"`
	ExternalRefs     []SPDXRef      `json:"externalRefs,omitempty"`
	PrimaryPurpose   string         `json:"primaryPackagePurpose,omitempty"`
}

// SPDXChecksum is a digest of a package's file.
type SPDXChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

// SPDXRef is a package URL.
type SPDXRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

// SPDXRelationship links two elements.
type SPDXRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// DebPackage is a Debian package in the agent image.
type DebPackage struct {
	Arch, Package, Version, SHA256 string
}

// SBOMInput is what the release's SBOM describes.
type SBOMInput struct {
	Version string
	// Binaries are the Go build information of every released binary
	// (debug/buildinfo of each file); their modules are merged.
	Binaries []*debug.BuildInfo
	// Image is the agent image: its reference, index digest and packages.
	ImageRef, ImageDigest string
	Debs                  []DebPackage
	// DebianRelease is the distro qualifier of the packages' purls.
	DebianRelease string
	Created       time.Time
}

func spdxID(kind, s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return "SPDXRef-" + kind + "-" + b.String()
}

func noAssert(p SPDXPackage) SPDXPackage {
	p.LicenseConcluded, p.LicenseDeclared, p.CopyrightText = "NOASSERTION", "NOASSERTION", "NOASSERTION"
	if p.DownloadLocation == "" {
		p.DownloadLocation = "NOASSERTION"
	}
	return p
}

// sbom builds an SPDX 2.3 document of the release: iolens, the Go
// toolchain and every Go module the binaries link, and the agent image
// with every Debian package it takes files from. The same input gives the
// same document (the namespace is derived from its content).
func sbom(in SBOMInput) ([]byte, error) {
	if len(in.Binaries) == 0 {
		return nil, fmt.Errorf("SBOM: no binaries")
	}
	doc := SPDX{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:         "iolens-" + in.Version,
		CreationInfo: SPDXCreation{Created: in.Created.UTC().Format(time.RFC3339), Creators: []string{"Organization: iolens", "Tool: iolens-release"}},
	}
	mainPath := in.Binaries[0].Main.Path
	root := noAssert(SPDXPackage{
		Name: mainPath, SPDXID: "SPDXRef-Package-iolens", VersionInfo: in.Version,
		DownloadLocation: "https://" + mainPath, PrimaryPurpose: "APPLICATION",
		ExternalRefs: []SPDXRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + mainPath + "@" + in.Version}},
	})
	root.LicenseDeclared = "Apache-2.0"
	doc.Packages = append(doc.Packages, root)
	doc.Relationships = append(doc.Relationships, SPDXRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", root.SPDXID})

	goVersions := map[string]bool{}
	mods := map[string]*debug.Module{}
	for _, bi := range in.Binaries {
		if bi.Main.Path != mainPath {
			return nil, fmt.Errorf("SBOM: binaries of two modules (%s, %s)", mainPath, bi.Main.Path)
		}
		goVersions[bi.GoVersion] = true
		for _, m := range bi.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			mods[m.Path+"@"+m.Version] = m
		}
	}
	for _, gv := range sortedKeys(goVersions) {
		p := noAssert(SPDXPackage{Name: "go", SPDXID: spdxID("Go", gv), VersionInfo: strings.TrimPrefix(gv, "go"),
			DownloadLocation: "https://go.dev/dl/", PrimaryPurpose: "LIBRARY",
			ExternalRefs: []SPDXRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/stdlib@" + gv}}})
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, SPDXRelationship{root.SPDXID, "DEPENDS_ON", p.SPDXID})
	}
	for _, k := range sortedKeys(mods) {
		m := mods[k]
		p := noAssert(SPDXPackage{Name: m.Path, SPDXID: spdxID("Go", k), VersionInfo: m.Version, PrimaryPurpose: "LIBRARY",
			ExternalRefs: []SPDXRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + m.Path + "@" + m.Version}}})
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, SPDXRelationship{root.SPDXID, "DEPENDS_ON", p.SPDXID})
	}

	if in.ImageRef != "" {
		img := noAssert(SPDXPackage{Name: in.ImageRef, SPDXID: "SPDXRef-Package-agent-image", VersionInfo: in.Version, PrimaryPurpose: "CONTAINER"})
		if d, ok := strings.CutPrefix(in.ImageDigest, "sha256:"); ok {
			img.Checksums = []SPDXChecksum{{"SHA256", d}}
			repo := in.ImageRef
			if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
				repo = repo[:i] // without the tag
			}
			name := repo[strings.LastIndex(repo, "/")+1:]
			img.ExternalRefs = []SPDXRef{{"PACKAGE-MANAGER", "purl", "pkg:oci/" + name + "@" + url.QueryEscape(in.ImageDigest) + "?repository_url=" + url.QueryEscape(repo)}}
		}
		doc.Packages = append(doc.Packages, img)
		doc.Relationships = append(doc.Relationships,
			SPDXRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", img.SPDXID},
			SPDXRelationship{img.SPDXID, "CONTAINS", root.SPDXID})
		debs := append([]DebPackage(nil), in.Debs...)
		sort.Slice(debs, func(i, j int) bool {
			if debs[i].Arch != debs[j].Arch {
				return debs[i].Arch < debs[j].Arch
			}
			return debs[i].Package < debs[j].Package
		})
		for _, d := range debs {
			purl := fmt.Sprintf("pkg:deb/debian/%s@%s?arch=%s", d.Package, url.PathEscape(d.Version), d.Arch)
			if in.DebianRelease != "" {
				purl += "&distro=" + in.DebianRelease
			}
			p := noAssert(SPDXPackage{Name: d.Package, SPDXID: spdxID("Deb", d.Arch+"-"+d.Package), VersionInfo: d.Version,
				Supplier: "Organization: Debian", PrimaryPurpose: "LIBRARY",
				Checksums:    []SPDXChecksum{{"SHA256", d.SHA256}},
				ExternalRefs: []SPDXRef{{"PACKAGE-MANAGER", "purl", purl}}})
			doc.Packages = append(doc.Packages, p)
			doc.Relationships = append(doc.Relationships, SPDXRelationship{img.SPDXID, "CONTAINS", p.SPDXID})
		}
	}
	// The namespace must be unique per document: a hash of the content.
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	doc.DocumentNamespace = "https://" + mainPath + "/spdx/" + in.Version + "-" + hex.EncodeToString(sum[:8])
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

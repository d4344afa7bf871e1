// Package docscheck holds the test that keeps the documentation references
// of the code valid: every Go comment that cites docs/<page>.md#<anchor>
// must name a page under docs/ and one of its headings (GitHub's anchor
// slugs), the pages' own links to each other must resolve, and comments
// must not cite the working notes that are not part of the repository. It
// has no API.
package docscheck

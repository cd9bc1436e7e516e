// Package ghaction holds the test of mcpdrift's GitHub Action (action.yml
// at the repository's root, its scripts in scripts/action): its steps
// run here as GitHub's runner runs them, with a made-up GITHUB_*
// environment, against the bundled mock server and a fake GitHub API.
package ghaction

// Package classify decides which MCP tools are privileged, from the tool
// NAME alone.
//
// Annotations (readOnlyHint, destructiveHint, ...) and descriptions are
// written by the server, so a malicious or careless server controls them;
// they are never used here. The name is server-controlled too, but it is what
// mcpdrift pins, so a rename shows up as drift.
//
// # Results
//
// Classify returns a Result. A name is "classified" (Privileged, with an
// ActionClass such as "github_deploy_key" and a Family such as
// "credentials") when a privileged rule applies, and "unclassified" otherwise.
// A user rule with "privileged: false" that applies makes the name
// unclassified. Explain returns the rule that decided a name.
//
// # Normalisation
//
// A name is split into lower-case word tokens (see Normalize): on every
// character that is not a letter or digit (".", "_", "-", "/", ":", spaces,
// ...), on camelCase boundaries, with a small plural stemmer (files -> file,
// policies -> policy, branches -> branch). So "github.add_deploy_key",
// "add-deploy-key", "addDeployKey" and "mcp__github__add_deploy_keys" all
// contain the tokens "add deploy key".
//
// Tokens are compared by their confusable folds (safetext.Fold: full case
// folding, compatibility forms, UTS #39 prototypes, without
// default-ignorable code points and combining marks), and the words of
// patterns are folded the same way. A name therefore classifies as the
// ASCII name it shows: "dеlete_file" with a Cyrillic е, "del\u200bete_file"
// with a zero-width space, "ＤＥＬＥＴＥ_file", "𝐝𝐞𝐥𝐞𝐭𝐞_file", "dèlete_file"
// and "de|ete_file" are all file_delete. Invisible characters never split a
// word; a name that holds some and is not privileged with them skipped is
// read a second time with them as separators, and is privileged if that
// reading is.
//
// # Patterns
//
// A rule has match patterns and optional exclude patterns. A pattern is a
// sequence of elements matched against the whole token sequence:
//
//	word     exactly that token (the word is normalised like a name, so
//	         "deployKeys" in a pattern means the two tokens "deploy key")
//	{a,b,c}  one token, any of a, b, c (each alternative a single word)
//	{,a,b}   an empty alternative makes the group optional
//	?        exactly one token, whatever it is
//	*        zero or more tokens
//
// Elements are separated by "_", ".", "-", "/", ":" or spaces; "*", "?" and
// {...} also end the word before them, so "*deploy_key*" means "* deploy key *".
// Wildcards work on whole tokens, never inside a word. Patterns are anchored:
// "delete_file" matches only a name whose tokens are exactly "delete file";
// "* delete file *" matches any name containing them. A verb x object rule is
// written "* {add,create,delete} * deploy key *". Every pattern needs at least
// one required word; anything else ("*", "{,a}", unbalanced braces, other
// punctuation, a multi-word alternative) is a load error.
//
// Patterns are compiled once, into bitset NFAs over a vocabulary of the words
// the rules use, plus an inverted index from words to rules. Classify does
// not allocate for an ASCII name (a non-ASCII token is folded with
// allocations), runs in time linear in the length of the name, and is safe
// for concurrent use.
//
// # Precedence
//
// A rule applies to a name when one of its match patterns matches and none of
// its exclude patterns does. Rules are tried in this order and the first that
// applies decides:
//
//  1. the user's rules, in file order;
//  2. the built-in rules (builtin.yaml, embedded), in table order, minus the
//     action classes and families listed under "disable".
//
// Inside the built-in table, specific classes come before generic ones
// (github_deploy_key before secret_write, sql_execute before shell_exec).
//
// # Rules file
//
//	version: 1                       # required; only 1 is understood
//	rules:                           # optional; tried before the built-ins
//	  - action_class: vault_unseal   # required, snake_case
//	    family: credentials          # required, one of Families()
//	    description: Unseal Vault.   # optional
//	    match: ["* vault * unseal *"]  # required, at least one pattern
//	    exclude: ["* dry run *"]     # optional
//	    privileged: false            # optional, default true
//	disable: [payments, github_deploy_key]  # optional: built-in classes or families
//
// Decoding is strict: unknown keys, duplicate keys, wrong types, more than one
// YAML document, an empty file, a missing or unsupported version, an unknown
// family, a duplicate action_class, an unknown disable entry and an invalid
// pattern are all errors. Errors are *RuleError values and read
// "file:line: message".
//
// A user rule may reuse a built-in action class name; it is only a label, and
// the built-in rule keeps applying to the names the user rule does not match.
// To replace a built-in rule, disable it and write your own.
package classify

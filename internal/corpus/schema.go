package corpus

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
)

// dialect is the JSON Schema flavour of the tool being generated.
type dialect uint8

const (
	draft07  dialect = iota // zod-to-json-schema, php
	draft202                // JSON Schema 2020-12
	pydantic                // 2020-12 as pydantic v2 writes it
)

// schemaCtx is per-tool schema state: the dialect and the definitions
// collected for $defs/definitions.
type schemaCtx struct {
	dialect dialect
	defs    object
}

func (c *schemaCtx) defsKey() string {
	if c.dialect == draft07 {
		return "definitions"
	}
	return "$defs"
}

// ref records a reusable definition and returns a $ref to it.
func (g *gen) ref(c *schemaCtx, name string, build func() object) object {
	if c.defs.get(name) == nil {
		c.defs = append(c.defs, member{name, object{}}) // reserve (recursion)
		s := build()
		c.defs.set(name, s)
	}
	return obj("$ref", "#/"+c.defsKey()+"/"+name)
}

func (g *gen) str(desc string, kv ...any) object {
	return append(obj("type", "string", "description", g.pdesc(desc)), obj(kv...)...)
}

func (g *gen) integer(desc string, lo, hi, def int64) object {
	return obj("type", "integer", "description", g.pdesc(desc),
		"minimum", g.num(lo), "maximum", g.maybe(0.9, g.num(hi)), "default", g.maybe(0.7, g.num(def)))
}

func (g *gen) boolean(desc string, def bool) object {
	return obj("type", "boolean", "description", g.pdesc(desc), "default", g.maybe(0.8, def))
}

func (g *gen) enum(desc string, def string, vals ...string) object {
	return obj("type", "string", "description", g.pdesc(desc), "enum", strs(vals...),
		"default", g.maybe(0.6, def))
}

func (g *gen) strArray(desc string, item object, kv ...any) object {
	return append(obj("type", "array", "description", g.pdesc(desc), "items", item), obj(kv...)...)
}

// Fixed literals in forms real generators emit.
var (
	int64Max  = number("9223372036854775807")
	uint64Max = number("18446744073709551615")
	maxSafe   = number("9007199254740991")
	maxDouble = number("1.7976931348623157e308")
)

// prop returns the schema of a property by template name.
func (g *gen) prop(c *schemaCtx, name string) object {
	if s := g.propRepos(c, name); s != nil {
		return s
	}
	if s := g.propMessages(c, name); s != nil {
		return s
	}
	if s := g.propData(c, name); s != nil {
		return s
	}
	if s := g.propBusiness(c, name); s != nil {
		return s
	}
	if s := g.propCalendar(c, name); s != nil {
		return s
	}
	// Generic fallbacks.
	return g.str("The "+strings.ReplaceAll(name, "_", " ")+".", "maxLength", g.maybe(0.3, g.num(1024)))
}

// propRepos is prop for repositories, issues, branches, paths and search
// (GitHub, a filesystem); nil for a name it does not know.
func (g *gen) propRepos(c *schemaCtx, name string) object {
	switch name {
	case "owner":
		return g.str("The account owner of the repository. The name is not case sensitive.",
			"pattern", `^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`, "minLength", g.num(1), "maxLength", g.num(39))
	case "repo":
		return g.str("The name of the repository without the `.git` extension.",
			"pattern", `^[\w.-]+$`, "examples", g.maybe(0.4, strs("hello-world", "mcp-servers")))
	case "title":
		return g.str("The title of the issue.", "minLength", g.num(1), "maxLength", g.num(256))
	case "body", "description_md":
		return g.str("The contents of the issue, in GitHub-flavoured Markdown. Supports @mentions, #123 references and ```code blocks```.",
			"maxLength", g.num(65536))
	case "labels":
		return g.strArray("Labels to associate with this issue. Pass one or more label names; "+
			"labels that don't exist are created.",
			obj("type", "string", "minLength", g.num(1), "maxLength", g.num(50)),
			"uniqueItems", true, "maxItems", g.num(100), "default", g.maybe(0.3, array{}))
	case "assignees", "to", "cc", "bcc", "names", "paths", "fields_list", "expand", "include_domains",
		"exclude_domains", "components", "avoid", "modifiers", "origins", "destinations":
		item := obj("type", "string")
		switch name {
		case "to", "cc", "bcc":
			item.set("format", "email")
		case "paths":
			item.set("minLength", g.num(1))
		}
		return g.strArray("List of "+strings.ReplaceAll(name, "_", " ")+".", item,
			"minItems", g.maybe(0.5, g.num(int64(g.intn(2)))), "maxItems", g.maybe(0.5, g.num(50)))
	case "milestone":
		return obj("description", g.pdesc("The number of the milestone to associate this issue with, or its title."),
			"oneOf", array{obj("type", "integer", "minimum", g.num(1)), obj("type", "string")})
	case "state":
		return g.enum("Indicates the state of the issues to return.", "open", "open", "closed", "all")
	case "per_page", "limit", "max_results", "num_results", "page_size", "max_rows":
		return g.integer("The number of results per page (max 100).", 1, 100, 30)
	case "page", "start_at", "start_index":
		return g.integer("The page number of the results to fetch, starting at 1.", 1, 1000000, 1)
	case "sort":
		return g.enum("What to sort results by.", "created", "created", "updated", "comments", "reactions-+1", "best-match")
	case "direction":
		return g.enum("The direction to sort the results by.", "desc", "asc", "desc")
	case "since", "time_min", "time_max", "start_date", "end_date", "post_at", "departure_time":
		f := "date-time"
		if strings.HasSuffix(name, "_date") {
			f = "date"
		}
		return g.str("Only show results at or after this time, as an ISO 8601 timestamp: YYYY-MM-DDTHH:MM:SSZ.",
			"format", f)
	case "head", "base", "branch", "ref":
		return g.str("The name of the branch (or a commit SHA, or a tag like v1.2.3).",
			"pattern", `^(?!/)(?!.*//)[^\s~^:?*\[\\]+$`, "default", g.maybe(0.2, "main"))
	case "draft", "dry_run", "recursive", "read_only", "analyze", "hourly", "include_alerts",
		"full_page", "raw", "unfurl_links", "include_archived", "follow_symlinks", "unread_only",
		"all_namespaces", "archived", "verbose":
		return g.boolean("Whether to "+strings.ReplaceAll(name, "_", " ")+". When true, the call has no other side effect.", g.chance(0.3))
	case "sha":
		return g.str("The blob SHA of the file being replaced.", "pattern", "^[0-9a-f]{40}([0-9a-f]{24})?$",
			"minLength", g.num(40), "maxLength", g.num(64))
	case "path", "source", "destination", "manifest":
		return g.str("Absolute or workspace-relative path, e.g. \"src/main.go\" or \"C:\\\\Users\\\\me\\\\notes.txt\".",
			"minLength", g.num(1), "maxLength", g.num(4096))
	case "query", "jql", "sql":
		return g.str("Search query. Supports qualifiers like `is:open`, `label:\"bug\"`, `author:@me` and boolean AND/OR/NOT.",
			"minLength", g.num(1), "maxLength", g.num(int64(g.intn(8)*512+256)))
	case "label_colors":
		// Keys whose UTF-8 byte order differs from UTF-16 order.
		return obj("type", "object", "description", g.pdesc("Label name → hex colour, for labels that are created."),
			"additionalProperties", obj("type", "string", "pattern", "^[0-9a-fA-F]{6}$"),
			"default", obj("🐛 bug", "d73a4a", "✨ enhancement", "a2eeef", "ドキュメント", "0075ca",
				"ｈｅｌｐ wanted", "008672", "good first issue", "7057ff", "\uff61dup", "cfd3d7", "é", "e99695"))
	case "merge_method":
		return g.enum("The merge method to use.", "merge", "merge", "squash", "rebase")
	}
	return nil
}

// propMessages is prop for messages, files and commands (Slack, a
// filesystem, a shell); nil for a name it does not know.
func (g *gen) propMessages(c *schemaCtx, name string) object {
	switch name {
	case "content", "text", "html", "message", "summary", "subject", "script", "command":
		return g.str("The "+name+" to send or write. Plain text; newlines are preserved.",
			"maxLength", g.maybe(0.6, g.num(40000)), "contentMediaType", g.maybe(0.2, "text/plain"))
	case "channel_id", "user_id", "calendar_id", "database_id", "page_id", "customer", "message_id",
		"place_id", "assignee", "project_key":
		return g.str("The ID of the "+strings.TrimSuffix(strings.TrimSuffix(name, "_id"), "_key")+", e.g. C024BE91L.",
			"pattern", pick(g, []string{"^[A-Z0-9]{9,11}$", "^[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$", "^(cus|pi|ch)_[A-Za-z0-9]{14,24}$", "^[A-Z][A-Z0-9_]{1,9}$"}))
	case "thread_ts":
		return g.str("Timestamp of the parent message, to reply in its thread, e.g. \"1712345678.123456\".",
			"pattern", `^\d{10}\.\d{6}$`)
	case "blocks", "children":
		return g.strArray("Block Kit blocks. See https://api.slack.com/block-kit.", g.ref(c, "Block", func() object {
			return obj("type", "object", "properties", obj(
				"type", g.enum("Block type.", "section", "section", "divider", "header", "context", "actions", "image"),
				"text", g.ref(c, "TextObject", func() object {
					return obj("type", "object", "properties", obj(
						"type", g.enum("Text type.", "mrkdwn", "plain_text", "mrkdwn"),
						"text", g.str("Up to 3000 characters.", "maxLength", g.num(3000)),
						"emoji", g.boolean("Render :emoji: codes.", true)),
						"required", strs("type", "text"), "additionalProperties", false)
				}),
				"block_id", g.str("Unique within the message.", "maxLength", g.num(255)),
				"elements", obj("type", "array", "items", obj("$ref", "#/"+c.defsKey()+"/TextObject"), "maxItems", g.num(10))),
				"required", strs("type"))
		}), "maxItems", g.num(50))
	case "emoji":
		return g.str("Emoji name without colons, e.g. \"thumbsup\" or \"tada\" (👍, 🎉).", "pattern", "^[a-z0-9_+-]+$")
	case "cursor", "starting_after", "start_cursor":
		return g.str("Opaque pagination cursor from the previous response's `next_cursor`.")
	case "metadata":
		return obj("type", "object", "description", g.pdesc("Set of key-value pairs that you can attach. Keys up to 40 characters, values up to 500."),
			"additionalProperties", obj("type", "string", "maxLength", g.num(500)),
			"propertyNames", obj("maxLength", g.num(40)), "maxProperties", g.num(50))
	case "encoding":
		return g.enum("Text encoding of the file.", "utf-8", "utf-8", "utf-16le", "latin1", "base64", "shift_jis")
	case "offset", "length", "tail_lines", "since_seconds", "grace_period_seconds", "max_length", "delay":
		return obj("type", "integer", "description", g.pdesc("Number of "+strings.ReplaceAll(name, "_", " ")+" (bytes, lines or seconds)."),
			"minimum", g.num(0), "maximum", pick(g, []any{int64Max, maxSafe, g.num(1 << 31), uint64Max}),
			"format", g.maybe(0.5, pick(g, []string{"int64", "uint64", "int32"})))
	case "pattern":
		return g.str("Glob pattern, e.g. \"**/*.{ts,tsx}\" or \"src/**/test_*.py\".", "default", g.maybe(0.3, "**/*"))
	case "exclude_patterns":
		return g.strArray("Glob patterns to exclude.", obj("type", "string"),
			"default", g.maybe(0.5, strs("node_modules/**", ".git/**", "*.min.js")))
	case "edits":
		return g.strArray("Edits to apply in order. Each oldText must match exactly once.", g.ref(c, "Edit", func() object {
			return obj("type", "object", "properties", obj(
				"oldText", g.str("Text to search for – must match exactly, including whitespace and \\n line endings."),
				"newText", g.str("Text to replace it with.")),
				"required", strs("oldText", "newText"), "additionalProperties", false)
		}), "minItems", g.num(1))
	case "max_depth", "days", "replicas", "num_retries":
		return g.integer("How many "+strings.ReplaceAll(name, "_", " ")+" (1–16).", 1, 16, 7)
	case "params":
		return obj("type", "array", "description", g.pdesc("Positional parameters for $1, $2, … placeholders."),
			"items", obj("anyOf", array{obj("type", "string"), obj("type", "number"), obj("type", "boolean"), obj("type", "null")}),
			"default", array{})
	case "timeout_ms", "timeout":
		return obj("type", "number", "description", g.pdesc("Timeout in milliseconds; 0 disables it."),
			"minimum", g.flt(0), "maximum", g.flt(600000), "default", pick(g, []any{number("3E4"), number("30000"), number("12.50"), number("1E3")}),
			"exclusiveMinimum", g.maybe(0.2, number("0.0")))
	}
	return nil
}

// propData is prop for databases, places and browsers (SQL, Notion
// filters, maps, Puppeteer); nil for a name it does not know.
func (g *gen) propData(c *schemaCtx, name string) object {
	switch name {
	case "database", "schema", "table", "namespace", "name", "container", "context", "folder", "site":
		return g.str("Name of the "+name+". Defaults to the connection's current "+name+".",
			"default", g.maybe(0.4, pick(g, []string{"public", "default", "main", "INBOX"})),
			"pattern", g.maybe(0.5, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`), "maxLength", g.maybe(0.5, g.num(63)))
	case "format", "output":
		return g.enum("Output format.", "json", "json", "text", "yaml", "markdown", "csv", "wide")
	case "isolation_level":
		return g.enum("Transaction isolation level.", "read committed", "read committed", "repeatable read", "serializable")
	case "filter", "notion_filter":
		return obj("description", g.pdesc("A filter tree. Leaf conditions compare one property; `and`/`or` nest up to 2 levels."),
			"oneOf", array{g.ref(c, "Filter", func() object {
				return obj("type", "object", "properties", obj(
					"property", g.str("Property name."),
					"operator", g.enum("Comparison.", "equals", "equals", "does_not_equal", "contains", "greater_than", "less_than", "is_empty"),
					"value", obj("anyOf", array{obj("type", "string"), obj("type", "number"), obj("type", "boolean"), obj("type", "null")}),
					"and", obj("type", "array", "items", obj("$ref", "#/"+c.defsKey()+"/Filter"), "maxItems", g.num(100)),
					"or", obj("type", "array", "items", obj("$ref", "#/"+c.defsKey()+"/Filter"), "maxItems", g.num(100))),
					"additionalProperties", false, "minProperties", g.num(1))
			}), obj("type", "null")})
	case "latitude":
		return obj("type", "number", "description", g.pdesc("Latitude in decimal degrees (WGS 84)."),
			"minimum", g.flt(-90), "maximum", g.flt(90), "examples", g.maybe(0.4, array{g.flt(37.7749), g.flt(35.6762)}))
	case "longitude":
		return obj("type", "number", "description", g.pdesc("Longitude in decimal degrees (WGS 84)."),
			"minimum", g.flt(-180), "maximum", g.flt(180), "examples", g.maybe(0.4, array{g.flt(-122.4194), g.flt(139.6503)}))
	case "elevation", "radius":
		return obj("type", "number", "description", g.pdesc("In metres; may be negative below sea level."),
			"minimum", number("-5e20"), "maximum", number("1E+21"), "multipleOf", g.maybe(0.5, number("0.1")))
	case "units":
		return g.enum("Unit system.", "metric", "metric", "imperial", "standard", "si")
	case "lang", "language", "locale", "region":
		return g.str("Language as a BCP 47 tag: en, fr-CA, ja, zh-Hant, pt-BR.", "pattern", `^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$`,
			"default", g.maybe(0.5, "en"))
	case "state_code":
		return g.str("Two-letter US state code (e.g. CA, NY).", "pattern", "^[A-Z]{2}$", "minLength", g.num(2), "maxLength", g.num(2))
	case "url", "reply_to", "callback_url":
		return g.str("Fully qualified URL including the scheme, e.g. https://example.com/path?q=1&lang=ja.",
			"format", pick(g, []string{"uri", "uri", "iri"}), "maxLength", g.maybe(0.5, g.num(2083)))
	case "selector":
		return g.str("CSS selector, e.g. `button[type=\"submit\"]` or `#main > .item:nth-child(2)`.")
	case "viewport", "clip":
		return g.ref(c, "Viewport", func() object {
			return obj("type", "object", "description", "Viewport size in CSS pixels.", "properties", obj(
				"width", obj("type", "integer", "minimum", g.num(1), "maximum", g.num(7680), "default", g.num(1280)),
				"height", obj("type", "integer", "minimum", g.num(1), "maximum", g.num(4320), "default", g.num(720)),
				"deviceScaleFactor", obj("type", "number", "minimum", number("0.1"), "maximum", g.flt(4), "default", number("1.0"))),
				"required", strs("width", "height"), "additionalProperties", false)
		})
	case "wait_until":
		return g.enum("When to consider navigation finished.", "load", "load", "domcontentloaded", "networkidle0", "networkidle2")
	case "fields":
		return g.strArray("Form fields to fill.", obj("type", "object", "properties", obj(
			"selector", g.str("CSS selector."),
			"value", obj("oneOf", array{obj("type", "string"), obj("type", "boolean"), obj("type", "number")})),
			"required", strs("selector", "value")), "minItems", g.num(1))
	case "key":
		return g.str("Key to press, e.g. \"Enter\", \"ArrowDown\", \"Control+A\".")
	case "quality":
		return obj("type", "integer", "description", g.pdesc("JPEG quality."), "minimum", g.num(0), "maximum", g.num(100), "default", number("80"))
	}
	return nil
}

// propBusiness is prop for tickets, payments and addresses (Jira,
// Stripe); nil for a name it does not know.
func (g *gen) propBusiness(c *schemaCtx, name string) object {
	switch name {
	case "priority", "importance":
		return g.enum("Priority.", "Medium", "Highest", "High", "Medium", "Low", "Lowest")
	case "story_points", "time_spent":
		return obj("type", "number", "description", g.pdesc("Estimate in points; halves allowed."),
			"minimum", g.flt(0), "maximum", g.flt(100), "multipleOf", number("0.5"), "default", g.maybe(0.3, number("4.50")))
	case "due_date":
		return g.str("Due date (YYYY-MM-DD).", "format", "date")
	case "issue_type":
		return g.enum("Issue type.", "Task", "Bug", "Task", "Story", "Epic", "Sub-task")
	case "amount":
		return obj("type", "integer", "description", g.pdesc("Amount in the smallest currency unit (e.g. 1250 = $12.50; ¥100 = 100)."),
			"minimum", g.num(50), "maximum", number("99999999"), "examples", g.maybe(0.5, array{g.num(1250), g.num(100000)}))
	case "currency":
		return g.str("Three-letter ISO 4217 currency code, lowercase.", "pattern", "^[a-z]{3}$", "default", g.maybe(0.5, "usd"),
			"examples", g.maybe(0.3, strs("usd", "eur", "jpy")))
	case "capture_method":
		return g.enum("Controls when funds are captured.", "automatic", "automatic", "automatic_async", "manual")
	case "idempotency_key":
		return g.str("Unique key so that retries don't create duplicates (UUID recommended).", "format", "uuid", "maxLength", g.num(255))
	case "description":
		return g.str("An arbitrary string attached to the object. Often useful for displaying to users.", "maxLength", g.num(1000))
	case "tax_rate":
		return obj("type", "number", "description", g.pdesc("Tax rate as a fraction: 0.2 means 20%."),
			"minimum", g.flt(0), "maximum", g.flt(1), "exclusiveMaximum", g.maybe(0.3, true), "multipleOf", number("1e-7"), "default", g.maybe(0.5, number("0.1")))
	case "email":
		return g.str("Email address.", "format", "email", "maxLength", g.num(512))
	case "reason", "response", "mode", "freshness", "safe_search":
		vals := map[string][]string{
			"reason":      {"duplicate", "fraudulent", "requested_by_customer"},
			"response":    {"accepted", "declined", "tentative"},
			"mode":        {"driving", "walking", "bicycling", "transit"},
			"freshness":   {"pd", "pw", "pm", "py"},
			"safe_search": {"off", "moderate", "strict"},
		}[name]
		return g.enum("One of: "+strings.Join(vals, ", ")+".", vals[0], vals...)
	case "address":
		return g.ref(c, "Address", func() object {
			return obj("type", "object", "description", "Postal address.", "properties", obj(
				"line1", g.str("Street, P.O. box or company name."),
				"line2", g.str("Apartment, suite, unit or building."),
				"city", g.str("City, district, suburb, town or village (e.g. Montréal, 大阪市)."),
				"postal_code", g.str("ZIP or postal code.", "pattern", "^[A-Za-z0-9 -]{2,10}$"),
				"country", g.str("Two-letter ISO 3166-1 country code.", "pattern", "^[A-Z]{2}$")),
				"required", strs("line1", "country"), "additionalProperties", false)
		})
	}
	return nil
}

// propCalendar is prop for calendars, mail, clusters, knowledge graphs and
// pages (Google Calendar, Kubernetes, memory, Notion); nil for a name it
// does not know.
func (g *gen) propCalendar(c *schemaCtx, name string) object {
	switch name {
	case "label_selector":
		return g.str("Label selector, e.g. \"app=nginx,tier in (frontend,backend)\".")
	case "dry_run_mode":
		return g.enum("Dry-run mode.", "none", "none", "client", "server")
	case "attachments":
		return g.strArray("Files to attach (max 25 MB in total).", g.ref(c, "Attachment", func() object {
			return obj("type", "object", "properties", obj(
				"filename", g.str("File name shown to recipients, e.g. \"résumé.pdf\"."),
				"content", g.str("Base64-encoded content.", "contentEncoding", "base64"),
				"contentType", g.str("MIME type.", "default", "application/octet-stream"),
				"size", obj("type", "integer", "minimum", g.num(0), "maximum", number("2.5e7"))),
				"required", strs("filename", "content"))
		}), "maxItems", g.num(10))
	case "start", "end":
		return g.ref(c, "EventDateTime", func() object {
			return obj("type", "object", "properties", obj(
				"dateTime", g.str("RFC 3339 timestamp with offset.", "format", "date-time"),
				"date", g.str("All-day date.", "format", "date"),
				"timeZone", g.str("IANA time zone, e.g. Europe/Zürich is invalid but Europe/Zurich is.")),
				"oneOf", array{obj("required", strs("dateTime")), obj("required", strs("date"))})
		})
	case "attendees":
		return g.strArray("Attendees.", obj("type", "object", "properties", obj(
			"email", g.str("Email.", "format", "email"),
			"optional", obj("type", "boolean", "default", false),
			"displayName", obj("type", "string")), "required", strs("email")))
	case "recurrence":
		return g.strArray("RRULE, EXRULE, RDATE and EXDATE lines (RFC 5545).", obj("type", "string", "pattern", "^(RRULE|EXRULE|RDATE|EXDATE):"),
			"examples", g.maybe(0.5, array{strs("RRULE:FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10")}))
	case "reminders":
		return obj("type", "object", "properties", obj(
			"useDefault", obj("type", "boolean"),
			"overrides", obj("type", "array", "maxItems", g.num(5), "items", obj("type", "object", "properties", obj(
				"method", obj("enum", strs("email", "popup")),
				"minutes", obj("type", "integer", "minimum", g.num(0), "maximum", g.num(40320)))))))
	case "time_zone":
		return g.str("IANA time zone name.", "default", g.maybe(0.5, "UTC"), "examples", g.maybe(0.3, strs("America/New_York", "Asia/Tokyo")))
	case "location":
		return g.str("Free-form location, e.g. \"Salle 3 – Bâtiment B\".")
	case "conference":
		return g.boolean("Create a video conference link.", false)
	case "entities":
		return g.strArray("Entities to create.", g.ref(c, "Entity", func() object {
			return obj("type", "object", "properties", obj(
				"name", g.str("The name of the entity."),
				"entityType", g.str("The type of the entity."),
				"observations", obj("type", "array", "items", obj("type", "string"), "description", "Observation contents.")),
				"required", strs("name", "entityType", "observations"), "additionalProperties", false)
		}))
	case "relations":
		return g.strArray("Relations to create, in active voice.", g.ref(c, "Relation", func() object {
			return obj("type", "object", "properties", obj(
				"from", g.str("Source entity name."),
				"to", g.str("Target entity name."),
				"relationType", g.str("Relation type, e.g. \"works_at\".")),
				"required", strs("from", "to", "relationType"))
		}))
	case "observations":
		return g.strArray("Observations to add.", obj("type", "object", "properties", obj(
			"entityName", obj("type", "string"),
			"contents", obj("type", "array", "items", obj("type", "string"))),
			"required", strs("entityName", "contents")))
	case "sorts":
		return g.strArray("Sort criteria, applied in order.", obj("type", "object", "properties", obj(
			"property", obj("type", "string"),
			"timestamp", obj("enum", strs("created_time", "last_edited_time")),
			"direction", obj("enum", strs("ascending", "descending"))), "required", strs("direction")))
	case "properties":
		return obj("type", "object", "description", g.pdesc("Property values keyed by property name or ID."),
			"additionalProperties", obj("oneOf", array{
				obj("type", "string"), obj("type", "number"), obj("type", "boolean"),
				obj("type", "array", "items", obj("type", "string")), obj("type", "null")}))
	case "icon":
		return obj("description", "An emoji (\"🚀\") or an external URL.",
			"anyOf", array{obj("type", "string", "maxLength", g.num(8)), obj("type", "string", "format", "uri")})
	}
	return nil
}

// genericProps pad out large schemas.
var genericProps = []string{
	"request_id", "trace", "locale", "verbose", "callback_url", "num_retries", "priority",
	"context", "tags", "note", "workspace_id", "project_id", "team_id", "format", "timeout",
	"include_deleted", "updated_after", "filter", "metadata", "client_version",
}

// inputSchema returns a tool's inputSchema.
func (g *gen) inputSchema(c *schemaCtx, d domain, op string) object {
	var np int
	switch x := g.r.Float64(); {
	case g.lean:
		np = g.between(2, 7)
	case x < 0.25:
		np = g.between(1, 8)
	case x < 0.75:
		np = g.between(8, 20)
	case x < 0.93:
		np = g.between(20, 32)
	default:
		np = g.between(32, 48)
	}
	names := sample(g, d.props, np)
	for len(names) < np {
		n := pick(g, genericProps)
		dup := false
		for _, m := range names {
			dup = dup || m == n
		}
		if dup {
			if g.chance(0.5) {
				np-- // avoid looping on a full pool
			}
			continue
		}
		names = append(names, n)
	}
	props := make(object, 0, len(names)+1)
	var required array
	for _, n := range names {
		s := g.prop(c, n)
		req := g.chance(0.35)
		if req {
			required = append(required, n)
		}
		if c.dialect == pydantic {
			s = g.pydanticProp(n, s, req)
		}
		props = append(props, member{n, s})
	}
	// Grouped options: a nested object (sometimes two levels deep) of
	// further properties, as API wrappers expose request bodies.
	groups := 0
	if g.lean {
		if g.chance(0.5) {
			groups = 1
		}
	} else {
		groups = g.between(0, 3)
	}
	for range groups {
		if g.chance(0.65) {
			if k := pick(g, groupNames); props.get(k) == nil {
				props = append(props, member{k, g.group(c, d, 1)})
			}
		}
	}
	if g.chance(0.04) {
		// A non-ASCII and an astral property name: UTF-16 order differs
		// from UTF-8 byte order.
		props = append(props, member{"名前", g.str("表示名（日本語可）。")},
			member{"😀mood", g.enum("Mood.", "ok", "ok", "great")})
	}
	s := obj("type", "object", "properties", props)
	if len(required) > 0 || g.chance(0.2) {
		if required == nil {
			required = array{}
		}
		s.set("required", required)
	}
	switch c.dialect {
	case draft07:
		s.set("additionalProperties", false)
		if g.chance(0.8) {
			s.set("$schema", "http://json-schema.org/draft-07/schema#")
		}
	case draft202:
		if g.chance(0.6) {
			s.set("additionalProperties", false)
		}
		if g.chance(0.5) {
			s.set("$schema", "https://json-schema.org/draft/2020-12/schema")
		}
	case pydantic:
		s.set("title", op+"Arguments")
	}
	if len(c.defs) > 0 {
		s.set(c.defsKey(), c.defs)
	}
	return s
}

var groupNames = []string{"options", "filters", "config", "advanced", "request", "settings", "payload"}

// group returns an object property whose members are further properties.
func (g *gen) group(c *schemaCtx, d domain, depth int) object {
	pool := slices.Clone(d.props)
	for _, p := range genericProps {
		if !slices.Contains(pool, p) {
			pool = append(pool, p)
		}
	}
	lo, hi := 4, 16
	if g.lean {
		lo, hi = 3, 6
	}
	names := sample(g, pool, g.between(lo, hi))
	props := make(object, 0, len(names)+1)
	var req array
	for _, n := range names {
		props = append(props, member{n, g.prop(c, n)})
		if g.chance(0.2) {
			req = append(req, n)
		}
	}
	if depth < 2 && !g.lean && g.chance(0.35) {
		props = append(props, member{"nested_" + pick(g, groupNames), g.group(c, d, depth+1)})
	}
	s := obj("type", "object", "description", g.pdesc("Additional "+pick(g, groupNames)+" for the request. All fields are optional unless listed in `required`."),
		"properties", props, "required", g.maybe(0.7, req))
	if g.chance(0.5) {
		s.set("additionalProperties", false)
	}
	if c.dialect == pydantic && g.chance(0.7) {
		return g.ref(c, titleCase(pick(g, groupNames))+strconv.Itoa(depth)+strconv.Itoa(g.intn(100)), func() object { return s })
	}
	return s
}

// pydanticProp rewrites a property the way pydantic v2 emits it: a title,
// and Optional[X] = None as anyOf [X, null] with default null.
func (g *gen) pydanticProp(name string, s object, required bool) object {
	if s.get("$ref") != nil {
		return s
	}
	s.set("title", titleCase(name))
	if required || g.chance(0.4) {
		return s
	}
	var desc any = skip
	if d := s.get("description"); d != nil {
		desc = d
	}
	s.del("description")
	s.del("default")
	s.del("title")
	return obj("anyOf", array{s, obj("type", "null")}, "default", nil,
		"title", titleCase(name), "description", desc)
}

// field returns the schema of a field of a returned record.
func (g *gen) field(name string) object {
	switch name {
	case "id", "number", "comments", "size", "lines", "row_count", "reply_count", "restarts",
		"amount", "created", "duration_ms", "elapsed_ms", "status":
		s := obj("type", "integer")
		if name == "id" && g.chance(0.5) {
			s = obj("type", "string")
		}
		if name == "id" || name == "size" {
			s.set("format", "int64")
			s.set("minimum", g.num(0))
			s.set("maximum", int64Max)
		}
		return s
	case "created_at", "updated_at", "closed_at", "modified", "date", "published_at", "created_time",
		"last_edited_time", "ts", "age":
		return obj("type", pick(g, []any{"string", array{"string", "null"}}), "format", "date-time")
	case "html_url", "url", "permalink", "receipt_url", "favicon":
		return obj("type", "string", "format", "uri", "examples", g.maybe(0.3, strs("https://github.com/octocat/Hello-World/issues/1347")))
	case "user", "organizer", "assignee", "from", "customer", "parent":
		return obj("type", "object", "properties", obj(
			"login", obj("type", "string"), "id", obj("type", "integer"),
			"avatar_url", obj("type", "string", "format", "uri"),
			"type", obj("enum", strs("User", "Bot", "Organization"))), "required", strs("login", "id"))
	case "labels", "types", "to", "notices", "attendees", "alerts", "console", "observations", "relations":
		return obj("type", "array", "items", obj("type", "string"))
	case "locked", "draft", "ok", "truncated", "livemode", "is_directory", "ready", "archived",
		"has_attachments":
		return obj("type", "boolean")
	case "temperature", "humidity", "wind_speed", "score", "rating", "distance":
		return obj("type", "number", "minimum", pick(g, []any{number("-273.15"), g.flt(0), number("-1e308")}),
			"maximum", pick(g, []any{maxDouble, number("100.0"), number("5")}))
	case "rows":
		return obj("type", "array", "items", obj("type", "array", "items", obj("type", array{"string", "number", "boolean", "null"})))
	case "columns":
		return obj("type", "array", "items", obj("type", "object", "properties", obj(
			"name", obj("type", "string"), "type", obj("type", "string"), "nullable", obj("type", "boolean"))))
	case "location":
		return obj("type", "object", "properties", obj("lat", obj("type", "number"), "lng", obj("type", "number")))
	case "metadata", "properties", "labels_map", "conditions", "plan":
		return obj("type", "object", "additionalProperties", true)
	case "state", "phase", "object", "currency", "conditions_text":
		return obj("type", "string", "enum", g.maybe(0.5, strs("open", "closed", "pending", "succeeded", "failed")))
	default:
		return obj("type", "string", "description", g.maybe(0.3, "The "+strings.ReplaceAll(name, "_", " ")+"."))
	}
}

// outputSchema describes a tool's structuredContent.
func (g *gen) outputSchema(c *schemaCtx, d domain, op string) object {
	fields := sample(g, d.entity, g.between(3, len(d.entity)))
	rec := make(object, 0, len(fields))
	var req array
	for _, f := range fields {
		rec = append(rec, member{f, g.field(f)})
		if g.chance(0.4) {
			req = append(req, f)
		}
	}
	record := obj("type", "object", "properties", rec, "required", g.maybe(0.8, append(array{}, req...)))
	verb, _ := phrase(op)
	if verb == "list" || verb == "search" || verb == "get" && g.chance(0.3) {
		return obj("type", "object", "properties", obj(
			"items", obj("type", "array", "items", record),
			"total_count", obj("type", "integer", "minimum", g.num(0)),
			"next_cursor", obj("type", array{"string", "null"}),
			"incomplete_results", obj("type", "boolean")),
			"required", strs("items"), "additionalProperties", g.maybe(0.5, false))
	}
	if c.dialect == draft07 && g.chance(0.5) {
		record.set("$schema", "http://json-schema.org/draft-07/schema#")
	}
	return record
}

var svgShapes = []string{
	`<circle cx="%d" cy="%d" r="%d" fill="#%06x"/>`,
	`<rect x="%d" y="%d" width="%d" height="%d" rx="2" fill="#%06x"/>`,
	`<path d="M%d %dL%d %dZ" stroke="#%06x" stroke-width="1.5"/>`,
}

// icon returns an MCP Icon; some are inline SVG data URIs.
func (g *gen) icon(d domain) object {
	if g.chance(0.5) {
		return obj("src", "https://cdn.example.com/mcp/icons/"+d.svc+"-"+strconv.Itoa(g.intn(4)+1)+".png",
			"mimeType", "image/png", "sizes", g.maybe(0.7, strs(pick(g, []string{"48x48", "96x96", "any"}))),
			"theme", g.maybe(0.3, pick(g, []string{"light", "dark"})))
	}
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">`)
	for range g.between(2, 14) {
		sh := pick(g, svgShapes)
		var args []any
		for range strings.Count(sh, "%d") {
			args = append(args, g.intn(24))
		}
		args = append(args, g.intn(1<<24))
		b.WriteString(sprintf(sh, args...))
	}
	b.WriteString(`</svg>`)
	return obj("src", "data:image/svg+xml;base64,"+base64.StdEncoding.EncodeToString([]byte(b.String())),
		"mimeType", "image/svg+xml", "sizes", strs("any"))
}

// sprintf supports only %d and %06x, which is all svgShapes needs.
func sprintf(f string, args ...any) string {
	var b []byte
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b = append(b, f[i])
			continue
		}
		v := args[0].(int)
		args = args[1:]
		if strings.HasPrefix(f[i:], "%06x") {
			h := strconv.FormatInt(int64(v), 16)
			b = append(b, strings.Repeat("0", 6-len(h))+h...)
			i += 3
		} else {
			b = strconv.AppendInt(b, int64(v), 10)
			i++
		}
	}
	return string(b)
}

// tool generates one tool object.
func (g *gen) tool() object {
	d := pick(g, domains)
	op := pick(g, d.ops)
	switch x := g.r.Float64(); {
	case x < 0.4:
		g.style = styleNode
	case x < 0.6:
		g.style = styleGo
	case x < 0.9:
		g.style = stylePython
	default:
		g.style = stylePHP
	}
	c := &schemaCtx{}
	switch g.style {
	case stylePython:
		c.dialect = pydantic
	case styleGo:
		c.dialect = draft202
	case stylePHP:
		c.dialect = draft07
	default:
		c.dialect = pick(g, []dialect{draft07, draft202})
	}
	name := g.toolName(d, op)
	t := obj("name", name, "description", g.description(d, op))
	if g.chance(0.7) {
		t.set("title", titleCase(op))
	}
	t.set("inputSchema", g.inputSchema(c, d, op))
	share := 0.6
	if g.lean {
		share = 0.3
	}
	if g.chance(share) {
		t.set("outputSchema", g.outputSchema(&schemaCtx{dialect: c.dialect}, d, op))
	}
	if g.chance(0.6) {
		verb, _ := phrase(op)
		ro := verb == "get" || verb == "list" || verb == "search" || verb == "read" || verb == "describe" ||
			verb == "query" || verb == "find" || verb == "retrieve" || verb == "open" || verb == "explain"
		destr := verb == "delete" || verb == "drop" || verb == "cancel" || verb == "merge"
		t.set("annotations", obj(
			"title", g.maybe(0.5, titleCase(op)),
			"readOnlyHint", ro,
			"destructiveHint", g.maybe(0.8, destr),
			"idempotentHint", g.maybe(0.6, ro || g.chance(0.3)),
			"openWorldHint", g.maybe(0.7, d.svc != "fs" && d.svc != "memory")))
	}
	if !g.lean && g.chance(0.15) {
		t.set("_meta", obj(
			"io.modelcontextprotocol/source", d.svc+"-mcp@"+strconv.Itoa(g.between(0, 3))+"."+strconv.Itoa(g.intn(20))+"."+strconv.Itoa(g.intn(10)),
			"openai/outputTemplate", g.maybe(0.4, "ui://widget/"+d.svc+"/"+strings.ReplaceAll(op, "_", "-")+".html"),
			"openai/toolInvocation/invoking", g.maybe(0.4, titleCase(op)+"…"),
			"openai/widgetAccessible", g.maybe(0.3, true),
			"com.example/cost", g.maybe(0.3, obj("credits", g.flt(float64(g.intn(40))/8), "currency", "USD")),
			"com.example/limits", g.maybe(0.3, obj("rpm", g.num(600), "max_payload", g.num(1<<20),
				"min_interval", number("2e-3"), "jitter", number("1E-3")))))
	}
	if !g.lean && g.chance(0.25) {
		n := g.between(1, 3)
		icons := make(array, n)
		for i := range icons {
			icons[i] = g.icon(d)
		}
		t.set("icons", icons)
	}
	return t
}

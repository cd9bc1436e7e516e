package classify

import (
	"testing"
)

// realName is a tool name published by a real MCP server, with the
// classification a security reviewer would want. want is "" for "not
// privileged", otherwise the action class the reviewer would expect (which
// may name a class the table does not have yet; such rows are then listed in
// knownMisclassifications).
//
// Sources: the README tool lists of github/github-mcp-server (and its
// deprecated aliases), the reference servers in modelcontextprotocol/servers
// and servers-archived (github, slack, filesystem, git, postgres, sqlite,
// memory, fetch, everything, puppeteer, brave-search, google-maps),
// microsoft/playwright-mcp, wonderwhy-er/DesktopCommanderMCP,
// ferrislucas/iterm-mcp, tumf/mcp-shell-server, designcomputer/mysql_mcp_server,
// supabase-community/supabase-mcp, neo4j-contrib/mcp-neo4j (cypher),
// mongodb-js/mongodb-mcp-server, stripe/agent-toolkit,
// cloudflare/mcp-server-cloudflare (bindings), awslabs/mcp (aws-api),
// containers/kubernetes-mcp-server, Flux159/mcp-server-kubernetes,
// makenotion/notion-mcp-server, GongRzhe/Gmail-MCP-Server,
// korotovsky/slack-mcp-server, ckreiling/mcp-server-docker,
// MarkusPfundstein/mcp-obsidian.
//
// How the numbers were obtained: the built-in table was written while
// looking at the first 307 rows, so on those it is in-sample. The two
// "blind" blocks at the end were labelled before the classifier was run on
// them. The first run on them gave precision 0.95 / recall 0.59 (block 1, 118
// names, 34 privileged) and precision 0.90 / recall 0.64 (block 2, 60 names,
// 14 privileged). The table was then extended with the fixes that generalise,
// and what is left is in knownMisclassifications. Treat the blind numbers as
// the estimate for servers the table has not seen.
//
// Issue 9 made deleting stored content privileged (data_delete): the rows
// that delete messages, issues, pages, events, emails and memory entities
// were relabelled from "" then. The current held-out estimates are in
// heldout_test.go and README.md.
type realName struct {
	server string
	name   string
	want   string
}

var realNames = []realName{
	// github/github-mcp-server
	{"github", "actions_get", ""},
	{"github", "actions_list", ""},
	{"github", "actions_run_trigger", "ci_run"},
	{"github", "add_comment_to_pending_review", ""},
	{"github", "add_issue_comment", ""},
	{"github", "add_reply_to_pull_request_comment", ""},
	{"github", "assign_copilot_to_issue", ""},
	{"github", "create_branch", ""},
	{"github", "create_gist", ""},
	{"github", "create_or_update_file", "file_write"},
	{"github", "create_pull_request", ""},
	{"github", "create_repository", ""},
	{"github", "delete_file", "file_delete"},
	{"github", "delete_repository", "repo_delete"},
	{"github", "dismiss_notification", ""},
	{"github", "fork_repository", ""},
	{"github", "get_code_scanning_alert", ""},
	{"github", "get_commit", ""},
	{"github", "get_dependabot_alert", ""},
	{"github", "get_file_contents", ""},
	{"github", "get_job_logs", ""},
	{"github", "get_me", ""},
	{"github", "get_secret_scanning_alert", ""},
	{"github", "get_team_members", ""},
	{"github", "get_teams", ""},
	{"github", "issue_read", ""},
	{"github", "issue_write", ""},
	{"github", "label_write", ""},
	{"github", "list_branches", ""},
	{"github", "list_commits", ""},
	{"github", "list_issues", ""},
	{"github", "list_pull_requests", ""},
	{"github", "list_repository_collaborators", ""},
	{"github", "list_secret_scanning_alerts", ""},
	{"github", "list_starred_repositories", ""},
	{"github", "list_tags", ""},
	{"github", "manage_notification_subscription", ""},
	{"github", "manage_repository_notification_subscription", ""},
	{"github", "mark_all_notifications_read", ""},
	{"github", "merge_pull_request", "pull_request_merge"},
	{"github", "projects_write", ""},
	{"github", "pull_request_read", ""},
	{"github", "pull_request_review_write", ""},
	{"github", "push_files", "file_write"},
	{"github", "request_copilot_review", ""},
	{"github", "search_code", ""},
	{"github", "search_issues", ""},
	{"github", "search_repositories", ""},
	{"github", "search_users", ""},
	{"github", "star_repository", ""},
	{"github", "sub_issue_write", ""},
	{"github", "update_gist", ""},
	{"github", "update_pull_request", ""},
	{"github", "update_pull_request_branch", ""},
	// github-mcp-server deprecated aliases, still seen in pinned manifests
	{"github", "cancel_workflow_run", ""},
	{"github", "delete_workflow_run_logs", "data_delete"},
	{"github", "download_workflow_run_artifact", ""},
	{"github", "get_workflow_run", ""},
	{"github", "list_workflow_runs", ""},
	{"github", "run_workflow", "ci_run"},
	{"github", "rerun_workflow_run", "ci_run"},
	{"github", "rerun_failed_jobs", "ci_run"},
	// @modelcontextprotocol/server-github (archived)
	{"server-github", "create_issue", ""},
	{"server-github", "get_issue", ""},
	{"server-github", "update_issue", ""},
	{"server-github", "create_pull_request_review", ""},
	{"server-github", "get_pull_request_files", ""},
	{"server-github", "get_pull_request_status", ""},

	// @modelcontextprotocol/server-slack (archived)
	{"slack", "slack_list_channels", ""},
	{"slack", "slack_post_message", "send_message"},
	{"slack", "slack_reply_to_thread", "send_message"},
	{"slack", "slack_add_reaction", ""},
	{"slack", "slack_get_channel_history", ""},
	{"slack", "slack_get_thread_replies", ""},
	{"slack", "slack_get_users", ""},
	{"slack", "slack_get_user_profile", ""},
	// korotovsky/slack-mcp-server
	{"slack-mcp-server", "conversations_history", ""},
	{"slack-mcp-server", "conversations_replies", ""},
	{"slack-mcp-server", "conversations_add_message", "send_message"},
	{"slack-mcp-server", "conversations_search_messages", ""},
	{"slack-mcp-server", "channels_list", ""},

	// @modelcontextprotocol/server-filesystem
	{"filesystem", "read_file", ""},
	{"filesystem", "read_text_file", ""},
	{"filesystem", "read_media_file", ""},
	{"filesystem", "read_multiple_files", ""},
	{"filesystem", "write_file", "file_write"},
	{"filesystem", "edit_file", "file_write"},
	{"filesystem", "create_directory", ""},
	{"filesystem", "list_directory", ""},
	{"filesystem", "list_directory_with_sizes", ""},
	{"filesystem", "directory_tree", ""},
	{"filesystem", "move_file", "file_write"},
	{"filesystem", "search_files", ""},
	{"filesystem", "get_file_info", ""},
	{"filesystem", "list_allowed_directories", ""},

	// wonderwhy-er/DesktopCommanderMCP
	{"desktop-commander", "execute_command", "shell_exec"},
	{"desktop-commander", "read_output", ""},
	{"desktop-commander", "force_terminate", ""},
	{"desktop-commander", "list_sessions", ""},
	{"desktop-commander", "list_processes", ""},
	{"desktop-commander", "kill_process", ""},
	{"desktop-commander", "start_process", "shell_exec"},
	{"desktop-commander", "interact_with_process", "shell_exec"},
	{"desktop-commander", "read_process_output", ""},
	{"desktop-commander", "edit_block", "file_write"},
	{"desktop-commander", "get_config", ""},
	{"desktop-commander", "set_config_value", "config_change"},
	// ferrislucas/iterm-mcp
	{"iterm", "write_to_terminal", "shell_exec"},
	{"iterm", "read_terminal_output", ""},
	{"iterm", "send_control_character", ""},
	// shell servers
	{"mcp-shell-server", "shell_execute", "shell_exec"},
	{"shell", "run_command", "shell_exec"},

	// @modelcontextprotocol/server-git
	{"git", "git_status", ""},
	{"git", "git_diff_unstaged", ""},
	{"git", "git_diff_staged", ""},
	{"git", "git_diff", ""},
	{"git", "git_commit", ""},
	{"git", "git_add", ""},
	{"git", "git_reset", ""},
	{"git", "git_log", ""},
	{"git", "git_create_branch", ""},
	{"git", "git_checkout", ""},
	{"git", "git_show", ""},
	{"git", "git_init", ""},
	{"git", "git_branch", ""},

	// databases
	{"postgres", "query", ""},
	{"sqlite", "read_query", ""},
	{"sqlite", "write_query", "database_write"},
	{"sqlite", "create_table", "database_schema_change"},
	{"sqlite", "list_tables", ""},
	{"sqlite", "describe_table", ""},
	{"sqlite", "append_insight", ""},
	{"mysql", "execute_sql", "sql_execute"},
	{"supabase", "apply_migration", "database_schema_change"},
	{"supabase", "list_migrations", ""},
	{"supabase", "list_extensions", ""},
	{"supabase", "get_logs", ""},
	{"supabase", "get_advisors", ""},
	{"supabase", "get_anon_key", ""},
	{"supabase", "generate_typescript_types", ""},
	{"supabase", "deploy_edge_function", "infra_deploy"},
	{"supabase", "list_edge_functions", ""},
	{"supabase", "delete_branch", "branch_delete"},
	{"neo4j-cypher", "read_neo4j_cypher", ""},
	{"neo4j-cypher", "write_neo4j_cypher", "database_write"},
	{"neo4j-cypher", "get_neo4j_schema", ""},
	{"mongodb", "find", ""},
	{"mongodb", "aggregate", ""},
	{"mongodb", "count", ""},
	{"mongodb", "insert-many", "database_write"},
	{"mongodb", "update-many", "database_write"},
	{"mongodb", "delete-many", "database_write"},
	{"mongodb", "drop-collection", "database_drop"},
	{"mongodb", "drop-database", "database_drop"},
	{"mongodb", "create-index", ""},
	{"mongodb", "create-collection", "database_schema_change"},
	{"mongodb", "rename-collection", "database_schema_change"},
	{"mongodb", "list-databases", ""},
	{"mongodb", "list-collections", ""},
	{"mongodb", "collection-schema", ""},
	{"mongodb", "db-stats", ""},
	{"mongodb", "explain", ""},
	{"mongodb", "atlas-list-clusters", ""},
	{"mongodb", "atlas-create-free-cluster", ""},
	{"mongodb", "atlas-create-access-list", "firewall_change"},
	{"mongodb", "atlas-inspect-access-list", ""},
	{"mongodb", "atlas-list-db-users", ""},
	{"mongodb", "atlas-create-db-user", "membership_change"},

	// @modelcontextprotocol/server-memory
	{"memory", "create_entities", ""},
	{"memory", "create_relations", ""},
	{"memory", "add_observations", ""},
	{"memory", "delete_entities", "data_delete"},
	{"memory", "delete_observations", "data_delete"},
	{"memory", "delete_relations", "data_delete"},
	{"memory", "read_graph", ""},
	{"memory", "search_nodes", ""},
	{"memory", "open_nodes", ""},
	// fetch, everything, search, maps
	{"fetch", "fetch", ""},
	{"everything", "echo", ""},
	{"everything", "add", ""},
	{"everything", "longRunningOperation", ""},
	{"everything", "printEnv", "secret_read"},
	{"everything", "sampleLLM", ""},
	{"everything", "getTinyImage", ""},
	{"brave-search", "brave_web_search", ""},
	{"brave-search", "brave_local_search", ""},
	{"google-maps", "maps_geocode", ""},
	{"google-maps", "maps_directions", ""},
	{"google-maps", "maps_search_places", ""},

	// browsers
	{"puppeteer", "puppeteer_navigate", ""},
	{"puppeteer", "puppeteer_screenshot", ""},
	{"puppeteer", "puppeteer_click", ""},
	{"puppeteer", "puppeteer_fill", ""},
	{"puppeteer", "puppeteer_select", ""},
	{"puppeteer", "puppeteer_hover", ""},
	{"puppeteer", "puppeteer_evaluate", "code_eval"},
	{"playwright", "browser_navigate", ""},
	{"playwright", "browser_navigate_back", ""},
	{"playwright", "browser_click", ""},
	{"playwright", "browser_type", ""},
	{"playwright", "browser_snapshot", ""},
	{"playwright", "browser_take_screenshot", ""},
	{"playwright", "browser_evaluate", "code_eval"},
	{"playwright", "browser_run_code", "code_eval"},
	{"playwright", "browser_file_upload", "file_upload"},
	{"playwright", "browser_press_key", ""},
	{"playwright", "browser_close", ""},
	{"playwright", "browser_tabs", ""},
	{"playwright", "browser_console_messages", ""},
	{"playwright", "browser_network_requests", ""},
	{"playwright", "browser_handle_dialog", ""},
	{"playwright", "browser_fill_form", ""},
	{"playwright", "browser_wait_for", ""},
	{"playwright", "browser_install", ""},
	{"playwright", "browser_resize", ""},
	{"playwright", "browser_drag", ""},
	{"playwright", "browser_hover", ""},
	{"playwright", "browser_select_option", ""},

	// email
	{"gmail", "send_email", "send_email"},
	{"gmail", "draft_email", ""},
	{"gmail", "read_email", ""},
	{"gmail", "search_emails", ""},
	{"gmail", "modify_email", ""},
	{"gmail", "delete_email", "data_delete"},
	{"gmail", "create_filter", "mail_forwarding_rule"},
	{"gmail", "download_attachment", ""},

	// stripe/agent-toolkit
	{"stripe", "create_customer", ""},
	{"stripe", "list_customers", ""},
	{"stripe", "create_product", ""},
	{"stripe", "create_price", ""},
	{"stripe", "create_payment_link", "payment_create"},
	{"stripe", "list_invoices", ""},
	{"stripe", "create_invoice", "invoice_write"},
	{"stripe", "create_invoice_item", "invoice_write"},
	{"stripe", "finalize_invoice", "invoice_write"},
	{"stripe", "retrieve_balance", ""},
	{"stripe", "create_refund", "payment_refund"},
	{"stripe", "list_payment_intents", ""},
	{"stripe", "list_subscriptions", ""},
	{"stripe", "cancel_subscription", "billing_change"},
	{"stripe", "update_subscription", "billing_change"},
	{"stripe", "create_coupon", "billing_change"},
	{"stripe", "update_dispute", "billing_change"},
	{"stripe", "list_disputes", ""},

	// cloudflare/mcp-server-cloudflare (workers bindings)
	{"cloudflare", "accounts_list", ""},
	{"cloudflare", "set_active_account", ""},
	{"cloudflare", "kv_namespaces_list", ""},
	{"cloudflare", "kv_namespace_create", ""},
	{"cloudflare", "kv_namespace_delete", "infra_delete"},
	{"cloudflare", "workers_list", ""},
	{"cloudflare", "workers_get_worker", ""},
	{"cloudflare", "workers_get_worker_code", ""},
	{"cloudflare", "r2_buckets_list", ""},
	{"cloudflare", "r2_bucket_create", ""},
	{"cloudflare", "r2_bucket_delete", "infra_delete"},
	{"cloudflare", "d1_databases_list", ""},
	{"cloudflare", "d1_database_create", ""},
	{"cloudflare", "d1_database_delete", "database_drop"},
	{"cloudflare", "d1_database_query", "sql_execute"},
	{"cloudflare", "hyperdrive_configs_list", ""},
	{"cloudflare", "search_cloudflare_documentation", ""},
	{"cloudflare", "migrate_pages_to_workers_guide", ""},
	// awslabs aws-api-mcp-server
	{"aws-api", "call_aws", "generic_dispatch"},
	{"aws-api", "suggest_aws_commands", ""},

	// containers/kubernetes-mcp-server
	{"kubernetes", "pods_list", ""},
	{"kubernetes", "pods_get", ""},
	{"kubernetes", "pods_log", ""},
	{"kubernetes", "pods_top", ""},
	{"kubernetes", "pods_delete", "infra_delete"},
	{"kubernetes", "pods_exec", "shell_exec"},
	{"kubernetes", "pods_run", "shell_exec"},
	{"kubernetes", "resources_list", ""},
	{"kubernetes", "resources_get", ""},
	{"kubernetes", "resources_create_or_update", "infra_deploy"},
	{"kubernetes", "resources_delete", "infra_delete"},
	{"kubernetes", "events_list", ""},
	{"kubernetes", "namespaces_list", ""},
	{"kubernetes", "configuration_view", ""},
	{"kubernetes", "helm_install", "infra_deploy"},
	{"kubernetes", "helm_list", ""},
	{"kubernetes", "helm_uninstall", "infra_delete"},
	// Flux159/mcp-server-kubernetes
	{"mcp-server-kubernetes", "kubectl_get", ""},
	{"mcp-server-kubernetes", "kubectl_describe", ""},
	{"mcp-server-kubernetes", "kubectl_logs", ""},
	{"mcp-server-kubernetes", "kubectl_apply", "infra_deploy"},
	{"mcp-server-kubernetes", "kubectl_delete", "infra_delete"},
	{"mcp-server-kubernetes", "exec_in_pod", "shell_exec"},
	{"mcp-server-kubernetes", "install_helm_chart", "infra_deploy"},
	{"mcp-server-kubernetes", "port_forward", ""},
	// ckreiling/mcp-server-docker
	{"docker", "list_containers", ""},
	{"docker", "run_container", "shell_exec"},
	{"docker", "remove_container", "infra_delete"},
	{"docker", "fetch_container_logs", ""},
	{"docker", "push_image", "infra_deploy"},
	{"docker", "remove_volume", "infra_delete"},

	// makenotion/notion-mcp-server (OpenAPI-generated names)
	{"notion", "API-post-search", ""},
	{"notion", "API-post-page", ""},
	{"notion", "API-patch-page", ""},
	{"notion", "API-retrieve-a-page", ""},
	{"notion", "API-post-database-query", ""},
	{"notion", "API-create-a-database", ""},
	{"notion", "API-create-a-comment", ""},
	{"notion", "API-delete-a-block", "data_delete"},
	{"notion", "API-get-users", ""},
	// MarkusPfundstein/mcp-obsidian
	{"obsidian", "list_files_in_vault", ""},
	{"obsidian", "append_content", "file_write"},
	{"obsidian", "patch_content", "file_write"},

	// Blind set 1 (labelled before the table had seen these servers):
	// a Discord server (116-tool "discp" fork of mcp-discord), Twilio,
	// paypal/agent-toolkit, grafana/mcp-grafana, heroku/heroku-mcp-server,
	// sooperset/mcp-atlassian and Atlassian's remote server.
	{"discord", "modify_server_settings", "workspace_admin"},
	{"discord", "create_server", ""},
	{"discord", "get_audit_logs", ""},
	{"discord", "prune_members", "membership_change"},
	{"discord", "create_text_channel", ""},
	{"discord", "delete_channel", "data_delete"},
	{"discord", "list_channel_permissions", ""},
	{"discord", "upsert_role_channel_permissions", "permission_change"},
	{"discord", "upsert_member_channel_permissions", "permission_change"},
	{"discord", "delete_channel_permission", "permission_change"},
	{"discord", "send_message", "send_message"},
	{"discord", "edit_message", ""},
	{"discord", "delete_message", "data_delete"},
	{"discord", "read_messages", ""},
	{"discord", "bulk_delete_messages", "data_delete"},
	{"discord", "add_reaction", ""},
	{"discord", "send_direct_message", "send_message"},
	{"discord", "read_direct_messages", ""},
	{"discord", "kick_member", "membership_change"},
	{"discord", "ban_member", "membership_change"},
	{"discord", "unban_member", "membership_change"},
	{"discord", "timeout_member", "membership_change"},
	{"discord", "list_members", ""},
	{"discord", "list_roles", ""},
	{"discord", "create_role", "permission_change"},
	{"discord", "edit_role", "permission_change"},
	{"discord", "delete_role", "permission_change"},
	{"discord", "assign_role", "permission_change"},
	{"discord", "remove_role", "permission_change"},
	{"discord", "create_invite", "membership_change"},
	{"discord", "delete_invite", ""},
	{"discord", "create_webhook", ""},
	{"discord", "send_webhook_message", "send_message"},
	{"discord", "generate_bot_invite_url", ""},
	{"discord", "create_thread", ""},
	{"discord", "create_forum_post", "send_message"},
	{"discord", "create_poll", ""},
	{"twilio", "twilio_send_sms", "send_message"},
	{"twilio", "twilio_send_mms", "send_message"},
	{"twilio", "twilio_get_messages", ""},
	{"twilio", "twilio_make_call", "send_message"},
	{"twilio", "twilio_get_recordings", ""},
	{"twilio", "twilio_search_available_numbers", ""},
	{"twilio", "twilio_purchase_phone_number", "payment_create"},
	{"twilio", "twilio_list_phone_numbers", ""},
	{"twilio-openapi", "create_message", "send_message"},
	{"twilio-openapi", "fetch_message", ""},
	{"paypal", "create_order", ""},
	{"paypal", "get_order", ""},
	{"paypal", "capture_order", "payment_create"},
	{"paypal", "update_product", ""},
	{"paypal", "create_subscription_plan", ""},
	{"paypal", "list_subscription_plans", ""},
	{"paypal", "create_subscription", "billing_change"},
	{"paypal", "show_subscription_details", ""},
	{"paypal", "send_invoice", "invoice_write"},
	{"paypal", "send_invoice_reminder", "invoice_write"},
	{"paypal", "cancel_sent_invoice", "invoice_write"},
	{"paypal", "generate_invoice_qr_code", ""},
	{"paypal", "get_invoice", ""},
	{"grafana", "list_teams", ""},
	{"grafana", "search_dashboards", ""},
	{"grafana", "get_dashboard_by_uid", ""},
	{"grafana", "update_dashboard", ""},
	{"grafana", "list_datasources", ""},
	{"grafana", "query_prometheus", ""},
	{"grafana", "create_incident", ""},
	{"grafana", "add_activity_to_incident", ""},
	{"grafana", "resolve_incident", ""},
	{"grafana", "query_loki_logs", ""},
	{"grafana", "list_alert_rules", ""},
	{"grafana", "get_current_oncall_users", ""},
	{"grafana", "find_slow_requests", ""},
	{"grafana", "list_contact_points", ""},
	{"heroku", "list_apps", ""},
	{"heroku", "get_app_info", ""},
	{"heroku", "create_app", ""},
	{"heroku", "rename_app", ""},
	{"heroku", "transfer_app", "ownership_transfer"},
	{"heroku", "deploy_to_heroku", "infra_deploy"},
	{"heroku", "deploy_one_off_dyno", "shell_exec"},
	{"heroku", "ps_list", ""},
	{"heroku", "ps_scale", "infra_deploy"},
	{"heroku", "ps_restart", ""},
	{"heroku", "list_addons", ""},
	{"heroku", "create_addon", ""},
	{"heroku", "maintenance_on", ""},
	{"heroku", "maintenance_off", ""},
	{"heroku", "get_app_logs", ""},
	{"heroku", "pg_psql", "sql_execute"},
	{"atlassian", "confluence_create_page", ""},
	{"atlassian", "confluence_delete_page", "data_delete"},
	{"atlassian", "confluence_get_comments", ""},
	{"atlassian", "confluence_search", ""},
	{"atlassian", "confluence_update_page", ""},
	{"atlassian", "jira_add_comment", ""},
	{"atlassian", "jira_add_worklog", ""},
	{"atlassian", "jira_batch_create_issues", ""},
	{"atlassian", "jira_create_issue", ""},
	{"atlassian", "jira_create_issue_link", ""},
	{"atlassian", "jira_delete_issue", "data_delete"},
	{"atlassian", "jira_download_attachments", ""},
	{"atlassian", "jira_link_to_epic", ""},
	{"atlassian", "jira_remove_issue_link", ""},
	{"atlassian", "jira_search", ""},
	{"atlassian", "jira_transition_issue", ""},
	{"atlassian", "jira_update_issue", ""},
	{"atlassian", "jira_update_sprint", ""},
	{"atlassian-remote", "getJiraIssue", ""},
	{"atlassian-remote", "editJiraIssue", ""},
	{"atlassian-remote", "createJiraIssue", ""},
	{"atlassian-remote", "transitionJiraIssue", ""},
	{"atlassian-remote", "addCommentToJiraIssue", ""},
	{"atlassian-remote", "createConfluencePage", ""},
	{"atlassian-remote", "updateConfluencePage", ""},
	{"atlassian-remote", "searchConfluenceUsingCql", ""},
	{"atlassian-remote", "lookupJiraAccountId", ""},
	{"atlassian-remote", "getAccessibleAtlassianResources", ""},

	// Blind set 2: taylorwilsdon/google_workspace_mcp (fork), another
	// Google MCP, two Vercel servers, git-fabric/cloudflare and an MCPGate
	// Cloudflare server.
	{"google-workspace", "list_calendars", ""},
	{"google-workspace", "get_events", ""},
	{"google-workspace", "create_event", ""},
	{"google-workspace", "modify_event", ""},
	{"google-workspace", "delete_event", "data_delete"},
	{"google-workspace", "search_drive_files", ""},
	{"google-workspace", "get_drive_file_content", ""},
	{"google-workspace", "list_drive_items", ""},
	{"google-workspace", "create_drive_file", "file_write"},
	{"google-workspace", "search_gmail_messages", ""},
	{"google-workspace", "get_gmail_message_content", ""},
	{"google-workspace", "send_gmail_message", "send_email"},
	{"google-workspace", "get_gmail_thread_content", ""},
	{"google-workspace", "modify_gmail_message_labels", ""},
	{"google-workspace", "list_gmail_labels", ""},
	{"google-workspace", "manage_gmail_label", ""},
	{"google-workspace", "draft_gmail_message", ""},
	{"yet-another-google-mcp", "find_files", ""},
	{"yet-another-google-mcp", "create_folder", ""},
	{"yet-another-google-mcp", "share_file", "permission_change"},
	{"yet-another-google-mcp", "get_gmail_profile", ""},
	{"yet-another-google-mcp", "read_sheet", ""},
	{"yet-another-google-mcp", "clear_range", "data_delete"},
	{"mcp-vercel", "vercel-list-all-deployments", ""},
	{"mcp-vercel", "vercel-get-deployment", ""},
	{"mcp-vercel", "vercel-list-deployment-files", ""},
	{"mcp-vercel", "vercel-create-deployment", "infra_deploy"},
	{"mcp-vercel", "vercel-create-project", ""},
	{"mcp-vercel", "vercel-list-projects", ""},
	{"mcp-vercel", "vercel-find-project", ""},
	{"mcp-vercel", "vercel-create-environment-variables", "secret_write"},
	{"mcp-vercel", "vercel-get-project-domain", ""},
	{"mcp-vercel", "vercel-get-environments", "secret_read"},
	{"mcp-vercel", "vercel-create-custom-environment", ""},
	{"mcp-vercel", "vercel-list-all-teams", ""},
	{"mcp-vercel", "vercel-create-team", ""},
	{"mcpgate-vercel", "vercel_list_projects", ""},
	{"mcpgate-vercel", "vercel_get_project", ""},
	{"mcpgate-vercel", "vercel_list_deployments", ""},
	{"mcpgate-vercel", "vercel_create_deployment", "infra_deploy"},
	{"mcpgate-vercel", "vercel_list_domains", ""},
	{"mcpgate-vercel", "vercel_add_domain", ""},
	{"mcpgate-vercel", "vercel_list_env_vars", ""},
	{"git-fabric-cloudflare", "cf_list_zones", ""},
	{"git-fabric-cloudflare", "cf_get_zone", ""},
	{"git-fabric-cloudflare", "cf_list_dns_records", ""},
	{"git-fabric-cloudflare", "cf_create_dns_record", "dns_change"},
	{"git-fabric-cloudflare", "cf_update_dns_record", "dns_change"},
	{"git-fabric-cloudflare", "cf_delete_dns_record", "dns_change"},
	{"git-fabric-cloudflare", "cf_purge_cache", ""},
	{"git-fabric-cloudflare", "cf_list_kv_namespaces", ""},
	{"git-fabric-cloudflare", "cf_list_kv_keys", ""},
	{"git-fabric-cloudflare", "cf_read_kv_value", ""},
	{"git-fabric-cloudflare", "cf_write_kv_value", "database_write"},
	{"git-fabric-cloudflare", "cf_delete_kv_value", "database_write"},
	{"git-fabric-cloudflare", "cf_zone_analytics", ""},
	{"mcpgate-cloudflare", "cf_d1_database_delete", "database_drop"},
	{"mcpgate-cloudflare", "cf_d1_query", "sql_execute"},
	{"twilio", "twilio_get_calls", ""},
	{"mongodb", "atlas-create-project", ""},
}

// knownMisclassification records a name from realNames that the built-in
// table gets wrong today. TestKnownMisclassifications asserts that each row
// still behaves as recorded, so improving (or breaking) the table shows up as
// a change to this list, never silently.
type knownMisclassification struct {
	server string
	name   string
	got    string // what Default().Classify returns today ("" = unclassified)
	want   string // what a reviewer wants (same as the realNames row)
	why    string
}

var knownMisclassifications = []knownMisclassification{
	{"desktop-commander", "edit_block", "", "file_write",
		"edits a file by search/replace, but \"block\" is not a file noun; matching edit*block would flag document and Notion block editors too"},
	{"desktop-commander", "set_config_value", "", "config_change",
		"the config includes allowedDirectories and blockedCommands, so this tool can lift the server's own sandbox; set/config is far too generic to flag by name"},
	{"cloudflare", "d1_database_query", "", "sql_execute",
		"runs arbitrary SQL including writes, but \"query\" alone is deliberately not privileged: postgres' `query` runs in a read-only transaction. Contrast mysql's execute_sql, which we flag"},
	{"kubernetes", "resources_create_or_update", "", "infra_deploy",
		"applies any Kubernetes manifest; \"resource\" is too generic a noun to flag outside Kubernetes"},
	{"kubernetes", "resources_delete", "data_delete", "infra_delete",
		"deletes any Kubernetes resource; \"resource\" is too generic a noun for infra_delete, so only the catch-all delete rule flags it (privileged, other class)"},
	{"playwright", "browser_file_upload", "", "file_upload",
		"uploads local files into a web page, an exfiltration path; there is no upload/exfiltration class yet and \"upload file\" on a cloud drive is a different risk"},
	{"gmail", "create_filter", "", "mail_forwarding_rule",
		"Gmail filters can auto-forward mail (silent exfiltration); \"create filter\" is otherwise harmless in most servers"},
	{"heroku", "deploy_one_off_dyno", "infra_deploy", "shell_exec",
		"runs an arbitrary command in a one-off dyno; the name says deploy, so it is privileged but filed under the wrong class"},
	{"mcp-vercel", "vercel-get-environments", "", "secret_read",
		"returns the project's environment variables (secrets), but \"get environments\" also names deployment environments everywhere else"},
	{"mcpgate-vercel", "vercel_list_env_vars", "secret_read", "",
		"false positive: Vercel returns sensitive env values encrypted, so listing is not a secret read here; elsewhere (printEnv, get_env) listing env vars does dump secrets"},
	{"yet-another-google-mcp", "clear_range", "", "data_delete",
		"wipes spreadsheet cells, but \"clear\" mostly names harmless resets (clear a console, a cache, a selection), so it is not a delete verb"},
	{"mcpgate-cloudflare", "cf_d1_query", "", "sql_execute",
		"same as d1_database_query: a bare \"query\" is not flagged because it is read-only in postgres"},
}

func TestRealToolNames(t *testing.T) {
	c := Default()
	known := map[[2]string]knownMisclassification{}
	for _, k := range knownMisclassifications {
		known[[2]string{k.server, k.name}] = k
	}
	seen := map[[2]string]bool{}
	var tp, fp, fn, tn, wrongClass int
	for _, rn := range realNames {
		key := [2]string{rn.server, rn.name}
		if seen[key] {
			t.Errorf("duplicate realNames row %v", key)
		}
		seen[key] = true

		got := c.Classify(rn.name)
		wantPriv := rn.want != ""
		switch {
		case wantPriv && got.Privileged:
			tp++
		case !wantPriv && got.Privileged:
			fp++
		case wantPriv && !got.Privileged:
			fn++
		default:
			tn++
		}
		if got.ActionClass == rn.want {
			if k, ok := known[key]; ok {
				t.Errorf("%s %q is now classified as wanted (%q) but is still listed in knownMisclassifications (recorded got %q): remove the row",
					rn.server, rn.name, rn.want, k.got)
			}
			continue
		}
		if wantPriv && got.Privileged {
			wrongClass++
		}
		k, ok := known[key]
		if !ok {
			t.Errorf("%s %q: got %q, want %q (fix the table, or record it in knownMisclassifications); tokens %q",
				rn.server, rn.name, got.ActionClass, rn.want, Normalize(rn.name))
			continue
		}
		if k.want != rn.want {
			t.Errorf("%s %q: knownMisclassifications wants %q but realNames wants %q", rn.server, rn.name, k.want, rn.want)
		}
	}
	for key := range known {
		if !seen[key] {
			t.Errorf("knownMisclassifications row %v has no realNames row", key)
		}
	}
	if len(realNames) < 120 {
		t.Errorf("only %d real names; the brief asks for at least 120", len(realNames))
	}
	precision := float64(tp) / float64(tp+fp)
	recall := float64(tp) / float64(tp+fn)
	t.Logf("real MCP tool names: %d (%d privileged, %d not), TP=%d FP=%d FN=%d TN=%d, wrong class=%d, precision=%.3f recall=%.3f, known misclassifications=%d",
		len(realNames), tp+fn, fp+tn, tp, fp, fn, tn, wrongClass, precision, recall, len(knownMisclassifications))
}

func TestKnownMisclassifications(t *testing.T) {
	c := Default()
	for _, k := range knownMisclassifications {
		got := c.Classify(k.name)
		if got.ActionClass != k.got {
			t.Errorf("%s %q: recorded as returning %q but now returns %q (want %q). Update knownMisclassifications (and drop the row if it is fixed)",
				k.server, k.name, k.got, got.ActionClass, k.want)
		}
		if k.got == k.want {
			t.Errorf("%s %q: a known misclassification must differ from what is wanted", k.server, k.name)
		}
		if k.why == "" {
			t.Errorf("%s %q: explain why", k.server, k.name)
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	c := Default()
	names := make([]string, len(realNames))
	for i, rn := range realNames {
		names[i] = rn.name
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, n := range names {
			c.Classify(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
}

func BenchmarkNew(b *testing.B) {
	data := []byte(userExtension)
	for i := 0; i < b.N; i++ {
		if _, err := New(data, "bench.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}

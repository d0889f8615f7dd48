// Package authz is the authorization loop: it resolves the guard's asks
// with the three pass layers (YOLO, session, project) and otherwise asks
// the session's user, pairing each question with its answer by request_id
// on the dispatcher's critical queue (user_help_needed /
// user_help_response). It also answers plugins' approval requests and keeps
// the project passes in ~/.yagent/settings.json.
package authz

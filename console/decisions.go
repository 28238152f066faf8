package console

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftworks/weft/auth"
	weftclient "github.com/weftworks/weft/client"
	weftv1 "github.com/weftworks/weft/proto/weft/v1"
)

// ReviewAccess is who may decide a pending review, as a card says it before anyone clicks: the
// gate's reviewers in words (Deciders), and whether the person viewing may decide it
// (weftclient.MayDecide, the rule the run enforces on the decision itself); when not, Why.
// The page shows Approve, Edit and Reject only to who may; the server refuses the others still.
type ReviewAccess struct {
	MayDecide bool   `json:"mayDecide"`
	Deciders  string `json:"deciders"`
	Why       string `json:"why,omitempty"`
}

// reviewAccess is r's ReviewAccess for who (nil: the operator on this machine, who decides
// every review under the name it gives).
func reviewAccess(who *auth.Identity, r *weftv1.ReviewRequest) ReviewAccess {
	a := ReviewAccess{MayDecide: weftclient.MayDecide(who, r), Deciders: deciders(r.GetReviewers())}
	switch {
	case a.MayDecide:
	case !who.Has(auth.RoleReviewer):
		a.Why = fmt.Sprintf("you are logged in as %s, which has %s and not the reviewer role", who.Name, rolesOf(who))
	default:
		a.Why = fmt.Sprintf("you are logged in as %s (%s), which the review does not name", who.Name, rolesOf(who))
	}
	return a
}

func rolesOf(who *auth.Identity) string {
	if len(who.Roles) == 0 {
		return "no role"
	}
	if len(who.Roles) == 1 {
		return "the role " + who.Roles[0]
	}
	return "the roles " + strings.Join(who.Roles, ", ")
}

// deciders words a gate's reviewers (ReviewRequest.reviewers: names, and "role:NAME" entries),
// who may decide it besides an admin and the operator.
func deciders(reviewers []string) string {
	if len(reviewers) == 0 {
		return "anyone with the reviewer role (and an admin, or the operator on the console's machine)"
	}
	var names, roles []string
	for _, rv := range reviewers {
		if role, ok := strings.CutPrefix(rv, "role:"); ok {
			roles = append(roles, role)
		} else {
			names = append(names, rv)
		}
	}
	var parts []string
	if len(names) > 0 {
		parts = append(parts, orList(names))
	}
	if len(roles) == 1 {
		parts = append(parts, "a reviewer with the role "+roles[0])
	} else if len(roles) > 1 {
		parts = append(parts, "a reviewer with one of the roles "+orList(roles))
	}
	return strings.Join(parts, ", or ") + " (and an admin, or the operator on the console's machine)"
}

func orList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// DecidedReview is a gate of the run that was decided, as the run records it (the review step's
// output, a forEach of reviews' results, an agent's tool call): who decided, what, when and why.
// The run page shows it on reload and to every viewer, as it shows the gates still waiting.
type DecidedReview struct {
	ID            string `json:"id"`
	Step          string `json:"step"`
	Title         string `json:"title,omitempty"`
	Decision      string `json:"decision"`
	Reviewer      string `json:"reviewer,omitempty"`
	Authenticated bool   `json:"authenticated,omitempty"`
	Comment       string `json:"comment,omitempty"`
	// DecidedAt is when, as the review step recorded it (zero for an agent's tool call, whose
	// record has how long the decision took instead).
	DecidedAt time.Time `json:"decidedAt,omitzero"`
}

// maxDecided is how many decided gates a snapshot carries (a forEach of reviews can have
// thousands): the first ones, in the order of the steps.
const maxDecided = 200

// decidedReviews reads the decided gates from a run's state.
func decidedReviews(st *weftv1.ExecutionState) []DecidedReview {
	var out []DecidedReview
	add := func(d DecidedReview) bool {
		if d.Decision == "" || d.Decision == "undecided" {
			return true
		}
		out = append(out, d)
		return len(out) < maxDecided
	}
	for _, s := range st.GetSteps() {
		title := s.GetName()
		if title == "" {
			title = s.GetId()
		}
		if s.GetTool() == "review" {
			o := s.GetOutput().GetStructValue()
			if res := o.GetFields()["results"].GetListValue(); res != nil {
				for i, v := range res.GetValues() {
					d := decisionOf(v.GetStructValue())
					d.ID, d.Step, d.Title = fmt.Sprintf("%s[%d]", s.GetId(), i), s.GetId(), fmt.Sprintf("%s, item %d", title, i)
					if !add(d) {
						return out
					}
				}
			} else if o != nil {
				d := decisionOf(o)
				d.ID, d.Step, d.Title = s.GetId(), s.GetId(), title
				if !add(d) {
					return out
				}
			}
		}
		for _, c := range s.GetToolCalls() {
			d := DecidedReview{ID: s.GetId() + "/" + c.GetId(), Step: s.GetId(), Title: fmt.Sprintf("%s: tool call %s", title, c.GetTool()),
				Decision: c.GetDecision(), Reviewer: c.GetReviewer(), Authenticated: c.GetAuthenticated(), Comment: c.GetComment()}
			if !add(d) {
				return out
			}
		}
	}
	return out
}

// decisionOf reads a review step's output (workflows/step_review.go): decision, reviewer,
// authenticated, comment, decidedAt.
func decisionOf(o *structpb.Struct) DecidedReview {
	f := o.GetFields()
	d := DecidedReview{Decision: f["decision"].GetStringValue(), Reviewer: f["reviewer"].GetStringValue(),
		Authenticated: f["authenticated"].GetBoolValue(), Comment: f["comment"].GetStringValue()}
	if t, err := time.Parse(time.RFC3339, f["decidedAt"].GetStringValue()); err == nil {
		d.DecidedAt = t
	}
	return d
}

// SPDX-License-Identifier: Apache-2.0

// Package datapath holds the facts about a network datapath that inspect
// and observe find and doctor and report branch on: yes/no/unknown answers
// (State) and the class of a device's RX path (Path). They are typed values
// so that rules compare facts, not display text; the text is made at the
// edge, by String and by the JSON (text) marshalling, and reads back into
// the same value.
//
// The package imports nothing of the project, so inspect and observe (which
// do not import each other) can both use it.
package datapath

import "fmt"

// State is a yes/no/unknown answer. The zero value is Unknown.
type State uint8

// States.
const (
	Unknown State = iota
	Yes
	No
)

var stateText = [...]string{Unknown: "unknown", Yes: "yes", No: "no"}

// String is the state as the JSON and the text views write it.
func (s State) String() string {
	if int(s) < len(stateText) {
		return stateText[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// ParseState reads "yes", "no" or "unknown"; anything else is an error
// (the schemas allow only these three).
func ParseState(s string) (State, error) {
	for i, t := range stateText {
		if t == s {
			return State(i), nil
		}
	}
	return Unknown, fmt.Errorf("state %q is not one of yes, no, unknown", s)
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) {
	if int(s) >= len(stateText) {
		return nil, fmt.Errorf("datapath: invalid %v", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a state's name; an unknown name is an error, so a
// file with one is refused rather than read as something it did not say.
func (s *State) UnmarshalText(b []byte) error {
	v, err := ParseState(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Of is Yes for true and No for false.
func Of(b bool) State {
	if b {
		return Yes
	}
	return No
}

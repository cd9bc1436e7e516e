package jcs_test

import (
	"errors"
	"fmt"

	"github.com/mcpdrift/mcpdrift/jcs"
)

func ExampleCanonicalize() {
	in := []byte(`{
		"numbers": [1.50, 1E3, -0, 1e21, 0.0000001],
		"string": "caf\u00e9 \/ \u0041\t\u001f",
		"\u20ac": true,
		"a": {"z": null, "\ud83d\ude00": [], "b": {}}
	}`)
	out, err := jcs.Canonicalize(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output:
	// {"a":{"b":{},"z":null,"😀":[]},"numbers":[1.5,1000,0,1e+21,1e-7],"string":"café / A\t\u001f","€":true}
}

func ExampleCanonicalize_error() {
	_, err := jcs.Canonicalize([]byte("{\"tools\": [\n  {\"name\": \"a\", \"n\\u0061me\": \"b\"}\n]}"))
	fmt.Println(err)
	var e *jcs.Error
	if errors.As(err, &e) {
		fmt.Println(e.Line, e.Column, e.Pointer)
	}
	// Output:
	// byte 28 (line 2, column 17), at JSON pointer "/tools/0/name": duplicate member name "name"
	// 2 17 /tools/0/name
}

package airlock_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/airlockrun/airlock"
)

// Intl is written in JavaScript, in the snapshot; like the built-ins it
// stands for, it must not change when a program replaces the array
// methods it uses (it captured them before any program ran).
func TestIntlIgnoresTamperedPrototypes(t *testing.T) {
	res, err := airlock.Eval(context.Background(), `
		Array.prototype.includes = () => false;
		Array.prototype.filter = () => [];
		Array.prototype.sort = function () { return this; };
		Array.prototype[Symbol.iterator] = function* () {};
		export default [new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(5),
			new Intl.RelativeTimeFormat().format(-1, 'days'), new Intl.Locale('en-US').baseName,
			Intl.supportedValuesOf('currency')[0], 'b'.localeCompare('a'),
			new Date(0).toLocaleString('en-US', { timeZone: 'America/New_York', timeZoneName: 'short' })]`,
		airlock.Options{Language: airlock.JavaScript})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("%s: %s", res.Error.Name, res.Error.Message)
	}
	want := []any{"$5.00", "1 day ago", "en-US", "AUD", 1.0, "12/31/1969, 7:00:00 PM EST"}
	if !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("got %#v, want %#v", res.Result, want)
	}
}

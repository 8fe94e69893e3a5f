/*-------------------------------------------------------------------------
 *
 * filter.c
 *		Filter policies: checked when a queue subscribes, matched against a
 *		message's headers when a topic publishes.
 *
 * A policy is a JSON object in the form of Amazon SNS's subscription
 * filter policies.  Each key names a header, and all of them must match.
 * A key's value is either an object of keys, matched against the header's
 * own object (nesting), or an array of alternatives, one of which must
 * match the header's value:
 *
 *   "x", 5, true                 the value equals it (numbers as numbers)
 *   {"prefix": "x"}              a string that starts with "x"
 *   {"anything-but": ...}        a value that is none of a string, a
 *                                number, an array of them, or that does
 *                                not start with {"prefix": "x"}
 *   {"numeric": [op, n]}         a number: op is =, <, <=, > or >=;
 *   {"numeric": [">", a, "<", b]}  or between two bounds (> or >=, then
 *                                < or <=)
 *   {"exists": true|false}       the header is there (and not null), or not
 *
 * A header whose value is an array matches when one of its elements does,
 * as an SNS String.Array attribute does.  Every other header than a key
 * names is ignored.  A policy is compiled once, when it is checked, into
 * the tree below; a match walks it beside the headers, without copying.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "topics/topics.h"

#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

typedef enum FilterTestKind
{
	TEST_EQUALS,				/* a string, number or boolean */
	TEST_PREFIX,
	TEST_ANYTHING_BUT,			/* none of values */
	TEST_ANYTHING_BUT_PREFIX,
	TEST_NUMERIC,
	TEST_EXISTS
} FilterTestKind;

/* A value of a policy: a string, a number or a boolean. */
typedef struct FilterValue
{
	enum jbvType type;			/* jbvString, jbvNumeric or jbvBool */
	char	   *string;
	int			length;
	Numeric		number;
	bool		boolean;
} FilterValue;

/* A comparison of a numeric test; "=" only alone. */
typedef enum NumericOp
{
	OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE
} NumericOp;

typedef struct FilterTest
{
	FilterTestKind kind;
	FilterValue value;			/* EQUALS; PREFIX's and ANYTHING_BUT_PREFIX's string */
	int			value_count;	/* ANYTHING_BUT */
	FilterValue *values;
	int			bound_count;	/* NUMERIC: 1 or 2 */
	NumericOp	ops[2];
	Numeric		bounds[2];
	bool		exists;			/* EXISTS */
} FilterTest;

typedef struct FilterKey
{
	char	   *key;
	int			length;
	HeaderFilter *nested;		/* an object of keys, or NULL */
	int			test_count;		/* else the alternatives */
	FilterTest *tests;
} FilterKey;

struct HeaderFilter
{
	int			key_count;
	FilterKey  *keys;
};

/* What the error messages of one check name. */
typedef struct PolicyCheck
{
	const char *topic;
	const char *queue;
} PolicyCheck;

static HeaderFilter *compile_object(JsonbContainer *object, const char *path,
									const PolicyCheck *check);

pg_noreturn static void
report_invalid(const PolicyCheck *check, const char *path, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid filter for queue \"%s\" on topic \"%s\"",
					check->queue, check->topic),
			 path[0] != '\0' ?
			 errdetail("At \"%s\": %s", path, problem) :
			 errdetail("%s", problem),
			 errhint("A filter is an object of header names, each with an array of alternatives: "
					 "strings, numbers, booleans, {\"prefix\": s}, {\"anything-but\": [...]}, "
					 "{\"numeric\": [op, n]} or {\"exists\": bool}; or with an object of such keys.")));
}

/* The value of a JSON scalar v as a FilterValue; false if it is no string, number or boolean. */
static bool
scalar_value(const JsonbValue *v, FilterValue *out)
{
	memset(out, 0, sizeof(*out));
	out->type = v->type;
	switch (v->type)
	{
		case jbvString:
			out->string = pnstrdup(v->val.string.val, v->val.string.len);
			out->length = v->val.string.len;
			return true;
		case jbvNumeric:
			out->number = DatumGetNumeric(datumCopy(NumericGetDatum(v->val.numeric),
													false, -1));
			return true;
		case jbvBool:
			out->boolean = v->val.boolean;
			return true;
		default:
			return false;
	}
}

/* The elements of a container that is an array; NULL if it is not one. */
static JsonbValue *
array_elements(const JsonbValue *v, int *count)
{
	JsonbContainer *array;
	JsonbValue *elements;
	int			i;

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data) ||
		JsonContainerIsScalar(v->val.binary.data))
		return NULL;
	array = v->val.binary.data;
	*count = JsonContainerSize(array);
	elements = palloc(sizeof(JsonbValue) * Max(*count, 1));
	for (i = 0; i < *count; i++)
		elements[i] = *getIthJsonbValueFromContainer(array, i);
	return elements;
}

/* The one key of an operator's object, and its value; false if not one key. */
static bool
single_key(const JsonbValue *v, char **key, JsonbValue *value)
{
	JsonbIterator *it;
	JsonbIteratorToken token;
	JsonbValue	item;
	int			keys = 0;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		return false;
	it = JsonbIteratorInit(v->val.binary.data);
	while ((token = JsonbIteratorNext(&it, &item, true)) != WJB_DONE)
	{
		if (token == WJB_KEY)
		{
			keys++;
			*key = pnstrdup(item.val.string.val, item.val.string.len);
		}
		else if (token == WJB_VALUE)
			*value = item;
	}
	return keys == 1;
}

static NumericOp
numeric_op(const JsonbValue *v, const char *path, const PolicyCheck *check)
{
	static const char *const names[] = {"=", "<", "<=", ">", ">="};
	int			i;

	if (v->type == jbvString)
		for (i = 0; i < (int) lengthof(names); i++)
			if (strlen(names[i]) == (size_t) v->val.string.len &&
				memcmp(names[i], v->val.string.val, v->val.string.len) == 0)
				return (NumericOp) i;
	report_invalid(check, path, "\"numeric\" takes the operators \"=\", \"<\", \"<=\", \">\" and \">=\".");
}

static int
compare_numbers(Numeric a, Numeric b)
{
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(a),
											 NumericGetDatum(b)));
}

/* {"numeric": [op, n]} or {"numeric": [">" or ">=", a, "<" or "<=", b]} */
static void
compile_numeric(const JsonbValue *v, FilterTest *test, const char *path,
				const PolicyCheck *check)
{
	JsonbValue *items;
	int			count = 0;
	int			i;

	items = array_elements(v, &count);
	if (items == NULL || (count != 2 && count != 4))
		report_invalid(check, path, "\"numeric\" takes an array [op, number] or [op, number, op, number].");
	test->kind = TEST_NUMERIC;
	test->bound_count = count / 2;
	for (i = 0; i < test->bound_count; i++)
	{
		test->ops[i] = numeric_op(&items[2 * i], path, check);
		if (items[2 * i + 1].type != jbvNumeric)
			report_invalid(check, path, "\"numeric\" compares with numbers.");
		test->bounds[i] = DatumGetNumeric(datumCopy(NumericGetDatum(items[2 * i + 1].val.numeric),
													false, -1));
	}
	if (count == 4 &&
		(!(test->ops[0] == OP_GT || test->ops[0] == OP_GE) ||
		 !(test->ops[1] == OP_LT || test->ops[1] == OP_LE)))
		report_invalid(check, path, "A \"numeric\" range is a lower bound (\">\" or \">=\") and then an upper one (\"<\" or \"<=\").");
	if (count == 4 && compare_numbers(test->bounds[0], test->bounds[1]) >= 0)
		report_invalid(check, path, "The lower bound of a \"numeric\" range must be less than its upper bound.");
}

/* {"anything-but": "x" | 5 | [values] | {"prefix": "x"}} */
static void
compile_anything_but(const JsonbValue *v, FilterTest *test, const char *path,
					 const PolicyCheck *check)
{
	JsonbValue *items;
	char	   *key;
	JsonbValue	operand;
	int			count = 0;
	int			i;

	test->kind = TEST_ANYTHING_BUT;
	if (single_key(v, &key, &operand))
	{
		if (strcmp(key, "prefix") != 0 || operand.type != jbvString ||
			operand.val.string.len == 0)
			report_invalid(check, path, "\"anything-but\" takes a string, a number, an array of them, or {\"prefix\": a string}.");
		test->kind = TEST_ANYTHING_BUT_PREFIX;
		scalar_value(&operand, &test->value);
		return;
	}
	items = array_elements(v, &count);
	if (items == NULL)
	{
		items = (JsonbValue *) v;
		count = 1;
	}
	if (count == 0)
		report_invalid(check, path, "\"anything-but\" needs at least one value.");
	test->value_count = count;
	test->values = palloc(sizeof(FilterValue) * count);
	for (i = 0; i < count; i++)
		if ((items[i].type != jbvString && items[i].type != jbvNumeric) ||
			!scalar_value(&items[i], &test->values[i]))
			report_invalid(check, path, "\"anything-but\" takes a string, a number, an array of them, or {\"prefix\": a string}.");
}

/* One alternative of a key's array into *test. */
static void
compile_test(const JsonbValue *v, FilterTest *test, const char *path,
			 const PolicyCheck *check)
{
	char	   *op;
	JsonbValue	operand;

	memset(test, 0, sizeof(*test));
	if (v->type == jbvNull)
		report_invalid(check, path, "null is no value a filter matches; use {\"exists\": false} for a header that is not there.");
	if (scalar_value(v, &test->value))
	{
		test->kind = TEST_EQUALS;
		return;
	}
	if (!single_key(v, &op, &operand))
		report_invalid(check, path, "Each alternative is a string, a number, a boolean, or an object of one operator.");

	if (strcmp(op, "prefix") == 0)
	{
		if (operand.type != jbvString || operand.val.string.len == 0)
			report_invalid(check, path, "\"prefix\" takes a string of at least one character.");
		test->kind = TEST_PREFIX;
		scalar_value(&operand, &test->value);
	}
	else if (strcmp(op, "anything-but") == 0)
		compile_anything_but(&operand, test, path, check);
	else if (strcmp(op, "numeric") == 0)
		compile_numeric(&operand, test, path, check);
	else if (strcmp(op, "exists") == 0)
	{
		if (operand.type != jbvBool)
			report_invalid(check, path, "\"exists\" takes true or false.");
		test->kind = TEST_EXISTS;
		test->exists = operand.val.boolean;
	}
	else
	{
		char	   *problem = psprintf("Unknown operator \"%s\": the operators are \"prefix\", \"anything-but\", \"numeric\" and \"exists\".",
									   op);

		report_invalid(check, path, problem);
	}
}

/* A key's value: an array of alternatives, or an object of nested keys. */
static void
compile_key(const JsonbValue *v, FilterKey *key, const char *path,
			const PolicyCheck *check)
{
	JsonbValue *items;
	int			count = 0;
	int			i;

	if (v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data))
	{
		key->nested = compile_object(v->val.binary.data, path, check);
		return;
	}
	items = array_elements(v, &count);
	if (items == NULL)
		report_invalid(check, path, "A key's value is an array of alternatives, or an object of keys.");
	if (count == 0)
		report_invalid(check, path, "A key's array needs at least one alternative.");
	key->test_count = count;
	key->tests = palloc(sizeof(FilterTest) * count);
	for (i = 0; i < count; i++)
		compile_test(&items[i], &key->tests[i], path, check);
}

static HeaderFilter *
compile_object(JsonbContainer *object, const char *path, const PolicyCheck *check)
{
	HeaderFilter *filter = palloc0(sizeof(HeaderFilter));
	JsonbIterator *it;
	JsonbIteratorToken token;
	JsonbValue	item;
	char	   *key_path = NULL;

	check_stack_depth();
	filter->key_count = JsonContainerSize(object);
	if (filter->key_count == 0)
		report_invalid(check, path, path[0] != '\0' ?
					   "An object of keys needs at least one key." :
					   "A filter needs at least one key; NULL takes every message.");
	filter->keys = palloc0(sizeof(FilterKey) * filter->key_count);

	/* keys come in the order of the jsonb: by length, then by bytes */
	it = JsonbIteratorInit(object);
	filter->key_count = 0;
	while ((token = JsonbIteratorNext(&it, &item, true)) != WJB_DONE)
	{
		FilterKey  *key = &filter->keys[filter->key_count];

		if (token == WJB_KEY)
		{
			key->key = pnstrdup(item.val.string.val, item.val.string.len);
			key->length = item.val.string.len;
			key_path = path[0] != '\0' ? psprintf("%s.%s", path, key->key) : key->key;
		}
		else if (token == WJB_VALUE)
		{
			compile_key(&item, key, key_path, check);
			filter->key_count++;
		}
	}
	return filter;
}

/*
 * The policy (a jsonb object) checked and compiled, in the current memory
 * context; 22023 naming topic and queue if it is not a valid policy.
 */
HeaderFilter *
queue_filter_compile(Jsonb *policy, const char *topic, const char *queue)
{
	PolicyCheck check = {topic, queue};

	if (!JB_ROOT_IS_OBJECT(policy) || JB_ROOT_IS_SCALAR(policy))
		report_invalid(&check, "", "A filter is a JSON object of header names.");
	return compile_object(&policy->root, "", &check);
}

/* Does the scalar v equal the policy's value? */
static bool
value_equals(const FilterValue *value, const JsonbValue *v)
{
	if (value->type != v->type)
		return false;
	switch (v->type)
	{
		case jbvString:
			return value->length == v->val.string.len &&
				memcmp(value->string, v->val.string.val, value->length) == 0;
		case jbvNumeric:
			return compare_numbers(v->val.numeric, value->number) == 0;
		case jbvBool:
			return value->boolean == v->val.boolean;
		default:
			return false;
	}
}

static bool
has_prefix(const FilterValue *prefix, const JsonbValue *v)
{
	return v->type == jbvString && v->val.string.len >= prefix->length &&
		memcmp(v->val.string.val, prefix->string, prefix->length) == 0;
}

static bool
numeric_holds(NumericOp op, Numeric number, Numeric bound)
{
	int			c = compare_numbers(number, bound);

	switch (op)
	{
		case OP_EQ:
			return c == 0;
		case OP_LT:
			return c < 0;
		case OP_LE:
			return c <= 0;
		case OP_GT:
			return c > 0;
		case OP_GE:
			return c >= 0;
	}
	return false;
}

/* Does one value (no array) pass the test? */
static bool
scalar_passes(const FilterTest *test, const JsonbValue *v)
{
	int			i;

	switch (test->kind)
	{
		case TEST_EQUALS:
			return value_equals(&test->value, v);
		case TEST_PREFIX:
			return has_prefix(&test->value, v);
		case TEST_ANYTHING_BUT:
			if (v->type != jbvString && v->type != jbvNumeric && v->type != jbvBool)
				return false;
			for (i = 0; i < test->value_count; i++)
				if (value_equals(&test->values[i], v))
					return false;
			return true;
		case TEST_ANYTHING_BUT_PREFIX:
			return v->type == jbvString && !has_prefix(&test->value, v);
		case TEST_NUMERIC:
			if (v->type != jbvNumeric)
				return false;
			for (i = 0; i < test->bound_count; i++)
				if (!numeric_holds(test->ops[i], v->val.numeric, test->bounds[i]))
					return false;
			return true;
		case TEST_EXISTS:
			break;
	}
	return false;
}

/* Does the header's value v (NULL: no such header) pass the test? */
static bool
test_passes(const FilterTest *test, const JsonbValue *v)
{
	if (test->kind == TEST_EXISTS)
		return test->exists == (v != NULL && v->type != jbvNull);
	if (v == NULL)
		return false;
	if (v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data))
	{
		JsonbContainer *array = v->val.binary.data;
		int			count = JsonContainerSize(array);
		int			i;

		for (i = 0; i < count; i++)
		{
			JsonbValue *element = getIthJsonbValueFromContainer(array, i);
			bool		passes = scalar_passes(test, element);

			pfree(element);
			if (passes)
				return true;
		}
		return false;
	}
	return scalar_passes(test, v);
}

/* Does the object of headers (NULL: none) match every key of filter? */
static bool
object_matches(const HeaderFilter *filter, JsonbContainer *headers)
{
	int			i;
	int			j;

	check_stack_depth();
	for (i = 0; i < filter->key_count; i++)
	{
		const FilterKey *key = &filter->keys[i];
		JsonbValue	found;
		JsonbValue *v = NULL;
		bool		passes = false;

		if (headers != NULL)
			v = getKeyJsonValueFromContainer(headers, key->key, key->length, &found);

		if (key->nested != NULL)
		{
			/* a header that is no object has no keys under it */
			bool		is_object = v != NULL && v->type == jbvBinary &&
				JsonContainerIsObject(v->val.binary.data);

			if (!object_matches(key->nested, is_object ? v->val.binary.data : NULL))
				return false;
			continue;
		}
		for (j = 0; j < key->test_count && !passes; j++)
			passes = test_passes(&key->tests[j], v);
		if (!passes)
			return false;
	}
	return true;
}

/* Does a message with headers (NULL: none) match filter (NULL: all do)? */
bool
queue_filter_matches(const HeaderFilter *filter, Jsonb *headers)
{
	if (filter == NULL)
		return true;
	return object_matches(filter, headers != NULL ? &headers->root : NULL);
}
